import { Injectable } from '@nestjs/common';
import { AggregateRepository, ReadYourWrites, type HandleResult } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { contactDecider, type ContactCommand, type ContactState } from '../domain/contact.decider';
import { contactKey, contactStream, legacyFormOf, normalizeEmail, type ContactEvent } from '../domain/contact.events';

/** How often a write that lost a race on a contact stream is decided again on the fresh state. */
const MAX_ATTEMPTS = 10;

/**
 * Runs contact commands. Besides what AggregateRepository.handle does, a command that changes
 * nothing still returns only once the read side has caught up with the stream: a caller that
 * lost the race to create a contact must be able to read the winner's contact right away.
 */
@Injectable()
export class ContactWriter {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly events: EventStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  /**
   * The key and stored form of an e-mail's contact: its normalized form, unless the e-mail's contact
   * was created under the form used until 2026-11-28 and the two differ (a decomposed or punycode
   * address), then that one, so an existing contact is updated rather than a second one created.
   */
  async locate(organizationId: string, email: string): Promise<{ key: string; email: string }> {
    const normalized = normalizeEmail(email);
    const legacy = legacyFormOf(email, normalized);
    if (legacy !== null) {
      const legacyKey = contactKey(organizationId, legacy);
      const [first] = await this.events.readStream(contactStream(organizationId, legacyKey), { maxCount: 1 });
      if (first) return { key: legacyKey, email: legacy };
    }
    return { key: contactKey(organizationId, normalized), email: normalized };
  }

  /** `made`: the ids a 503 of a write stored while the read side lags names (see ReadYourWrites.waitFor). */
  async run(streamId: string, command: ContactCommand, actor: string, made?: Record<string, string>): Promise<HandleResult<ContactState, ContactEvent>> {
    const result = await this.repository.handle(contactDecider, streamId, command, { metadata: { actor }, maxAttempts: MAX_ATTEMPTS, what: 'The contact', made });
    if (result.position === null && result.revision >= 0) {
      const [last] = await this.events.readStream(streamId, { fromRevision: result.revision, maxCount: 1 });
      if (last) await this.readYourWrites.waitFor(last.position, made);
    }
    return result;
  }
}
