/** The bus topic the outbox's relay copies the event log to. */
export const DOMAIN_EVENTS_TOPIC = 'domain-events';

/**
 * The relay's checkpoint in the read store: the position of the last event the bus accepted. The
 * outbox relays what comes after it; `outbox:skip-to-head` moves it (docs/operations.md).
 */
export const RELAY_CHECKPOINT = 'relay:domain-events';
