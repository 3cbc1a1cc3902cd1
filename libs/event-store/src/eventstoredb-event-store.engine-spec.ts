import { describeEventStoreContract } from '@lib/event-store/testing/event-store.contract';
import { EventStoreDbEventStore } from './eventstoredb-event-store';

/**
 * The port contract against a real EventStoreDB, e.g. `EVENTSTORE_URL=esdb://localhost:2113?tls=false`
 * with the server of docker-compose.yml. Each test writes to its own random streams, so the
 * server need not be empty. Without the variable the suite shows as skipped, never as passed.
 */
const url = process.env.EVENTSTORE_URL;

if (url) {
  describeEventStoreContract(`EventStoreDbEventStore on ${url}`, async () => {
    const store = EventStoreDbEventStore.connect({ url, retryDelayMs: 50 });
    return { store, cleanup: () => store.close() };
  });
} else {
  describe.skip('EventStoreDB contract (EVENTSTORE_URL not set)', () => {
    it('runs the EventStore contract suite against a real server', () => undefined);
  });
}
