import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { RecordedEvent } from '@lib/event-store';
import type { Reactor } from '@lib/runtime';
import { CloseSubmissionOnAcceptance, MarkSubmissionQuoted } from '@lib/submissions';
import { QUOTE_STREAM, type QuoteEvent } from '../domain/quote.events';

/**
 * Keeps the submission's status in step with its quotes (decisions §7). The request that
 * creates or accepts a quote already does this at once; this reactor (in the outbox, at least
 * once per event) repeats it so a failure or crash in between never leaves a submission behind.
 * Both submission commands are idempotent per quote, so a repeated or late delivery never undoes a
 * later PATCH of the status (docs/decisions/sessions-and-submissions.md).
 */
@Injectable()
export class SubmissionLifecycleReactor implements Reactor {
  readonly name = 'quotes:submission-lifecycle';
  readonly filter = { streamPrefixes: [QUOTE_STREAM], eventTypePrefixes: ['quote.v1.created', 'quote.v1.accepted'] };

  constructor(private readonly commands: CommandBus) {}

  async react(recorded: RecordedEvent): Promise<void> {
    const event = recorded as unknown as QuoteEvent;
    const actor = String(recorded.metadata.actor ?? 'system');
    if (event.type === 'quote.v1.created') {
      await this.commands.execute(new MarkSubmissionQuoted(event.data.organizationId, event.data.submissionId, event.data.quoteId, actor));
    } else if (event.type === 'quote.v1.accepted') {
      await this.commands.execute(new CloseSubmissionOnAcceptance(event.data.organizationId, event.data.submission.id, event.data.quoteId, actor));
    }
  }
}
