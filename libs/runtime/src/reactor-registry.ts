import { Injectable } from '@nestjs/common';
import type { EventFilter, RecordedEvent } from '@lib/event-store';

/**
 * A side effect of a domain event (an e-mail, a webhook delivery). Reactors run only in the
 * outbox, at least once per event: they must tolerate seeing an event twice.
 */
export interface Reactor {
  name: string;
  filter: EventFilter;
  react(event: RecordedEvent): Promise<void>;
}

@Injectable()
export class ReactorRegistry {
  private readonly reactors = new Map<string, Reactor>();

  register(...reactors: Reactor[]): void {
    for (const reactor of reactors) this.reactors.set(reactor.name, reactor);
  }

  all(): Reactor[] {
    return [...this.reactors.values()];
  }
}
