import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AggregateRepository } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import type { Reactor } from '@lib/runtime';
import { SESSION_STREAM, type SessionEvent } from '../domain/session.events';
import { completeSubmission, freezeOntoSubmission, loadSession } from './session.commands';

/**
 * The safety net behind a customer's submit and a late live price: the requests create the
 * submission and the contact, and freeze an adjustment that arrives after submit, right away; this
 * reactor (in the outbox, at least once per event) makes sure they happen even if the process died
 * between the session write and those commands. A late adjustment freezes the session's current
 * one, so a replayed older event never overwrites a newer answer.
 */
@Injectable()
export class SubmissionFollowUpReactor implements Reactor {
  readonly name = 'sessions:submission-follow-up';
  readonly filter = { streamPrefixes: [SESSION_STREAM], eventTypePrefixes: ['session.v1.submitted', 'session.v1.adjustmentReceived'] };

  constructor(
    private readonly repository: AggregateRepository,
    private readonly commands: CommandBus,
  ) {}

  async react(recorded: RecordedEvent): Promise<void> {
    const event = recorded as unknown as SessionEvent;
    const actor = String(recorded.metadata.actor ?? 'system');
    if (event.type === 'session.v1.submitted') {
      const session = await loadSession(this.repository, event.data.sessionId);
      await completeSubmission(this.commands, { ...session, sessionId: event.data.sessionId }, event.data, actor);
    } else if (event.type === 'session.v1.adjustmentReceived') {
      await freezeOntoSubmission(this.commands, await loadSession(this.repository, event.data.sessionId), actor);
    }
  }
}
