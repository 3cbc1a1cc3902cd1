import { Injectable, Logger } from '@nestjs/common';
import { EventStore, WrongExpectedRevisionError, type EventData, type EventMetadata } from '@lib/event-store';
import { ConcurrentModification, LruMap } from '@lib/shared';
import type { Decider } from './decider';
import { ReadYourWrites } from './read-your-writes';
import { upcast } from './upcasting';

export interface HandleOptions {
  metadata?: EventMetadata;
  /** how often a write conflict is retried against the fresh state before it becomes a 409 */
  maxAttempts?: number;
  /** wait until every projection has applied the new events (read-your-writes); default true */
  awaitProjections?: boolean;
  /** a label for the conflict error message */
  what?: string;
  /** the ids of what the write creates, named in the 503 of a write stored while the read side lags (kept under an Idempotency-Key) */
  made?: Record<string, string>;
}

export interface HandleResult<State, Event> {
  state: State;
  newEvents: Event[];
  /** revision of the stream after the write (-1 when the stream does not exist) */
  revision: number;
  /** global position of the last new event, or null when the command produced no events */
  position: number | null;
}

interface Folded {
  evolve: unknown;
  state: unknown;
  revision: number;
  position: number;
}

/** How many folded streams a process keeps; the least recently used are dropped first. */
const FOLDED_CACHE_SIZE = 5_000;

/**
 * Runs a command against an event-sourced aggregate: load the stream, fold it, decide, append
 * with the expected revision. A concurrent writer makes the append fail; the command is then
 * decided again on the fresh state, a few times, before it surfaces as a conflict.
 *
 * Folded states are cached per stream: streams only grow, so a load reads just the events after
 * the cached revision (written by anyone, in any process) and folds them on. States are
 * immutable values (`evolve` returns a new state), which is what makes sharing them safe.
 */
@Injectable()
export class AggregateRepository {
  private readonly logger = new Logger(AggregateRepository.name);
  private readonly folded = new LruMap<string, Folded>(FOLDED_CACHE_SIZE);

  constructor(
    private readonly store: EventStore,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  async load<State, Event extends EventData>(
    decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
    streamId: string,
  ): Promise<{ state: State; revision: number; position: number }> {
    const cached = this.folded.get(streamId);
    const start = cached && cached.evolve === decider.evolve ? cached : null;
    let state = start ? (start.state as State) : decider.initialState();
    let revision = start ? start.revision : -1;
    let position = start ? start.position : 0;
    const events = await this.store.readStream(streamId, { fromRevision: revision + 1 });
    for (const event of events) {
      state = decider.evolve(state, upcast(event) as unknown as Event);
      revision = event.revision;
      position = event.position;
    }
    if (revision >= 0) this.remember(streamId, { evolve: decider.evolve, state, revision, position });
    return { state, revision, position };
  }

  private remember(streamId: string, folded: Folded): void {
    const current = this.folded.get(streamId);
    if (current && current.evolve === folded.evolve && current.revision > folded.revision) return;
    this.folded.set(streamId, folded);
  }

  async handle<State, Command, Event extends EventData>(
    decider: Decider<State, Command, Event>,
    streamId: string,
    command: Command,
    options: HandleOptions = {},
  ): Promise<HandleResult<State, Event>> {
    const maxAttempts = options.maxAttempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      const { state, revision, position: seen } = await this.load(decider, streamId);
      const newEvents = decider.decide(command, state);
      if (newEvents.length === 0) {
        // Nothing to write, but the state we answered from may come from another writer's events
        // that the read side has not applied yet: wait for them too.
        if (options.awaitProjections !== false) await this.readYourWrites.waitFor(seen);
        return { state, newEvents, revision, position: null };
      }
      const stored = newEvents.map((e) => ({ ...e, metadata: { ...options.metadata, ...e.metadata } }));
      try {
        const result = await this.store.appendToStream(streamId, stored, revision === -1 ? 'no_stream' : revision);
        const next = newEvents.reduce(decider.evolve, state);
        this.remember(streamId, { evolve: decider.evolve, state: next, revision: result.nextRevision, position: result.position });
        if (options.awaitProjections !== false) await this.readYourWrites.waitFor(result.position, options.made);
        return { state: next, newEvents, revision: result.nextRevision, position: result.position };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (attempt >= maxAttempts) {
          this.logger.warn(`write conflict on ${streamId} after ${attempt} attempts`);
          throw new ConcurrentModification(options.what ?? 'The record');
        }
        await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
      }
    }
  }
}
