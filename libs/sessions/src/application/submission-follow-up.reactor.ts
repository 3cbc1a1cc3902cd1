import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import type { Reactor } from '@lib/runtime';
import { SESSION_STREAM, type SessionEvent } from '../domain/session.events';
import { completeSubmission, loadSession } from './session.commands';

/**
 * The safety net behind a customer's submit: the request creates the submission and the contact
 * right away, and this reactor (in the outbox, at least once per event) makes sure they exist even
 * if the process died between the session write and those commands.
 */
@Injectable()
export class SubmissionFollowUpReactor implements Reactor {
  readonly name = 'sessions:submission-follow-up';
  readonly filter = { streamPrefixes: [SESSION_STREAM], eventTypePrefixes: ['session.v1.submitted'] };

  constructor(
    private readonly repository: AggregateRepository,
    private readonly commands: CommandBus,
  ) {}

  async react(recorded: RecordedEvent): Promise<void> {
    const event = recorded as unknown as SessionEvent;
    if (event.type !== 'session.v1.submitted') return;
    const session = await loadSession(this.repository, event.data.sessionId);
    await completeSubmission(this.commands, { ...session, sessionId: event.data.sessionId }, event.data, String(recorded.metadata.actor ?? 'system'));
  }
}
