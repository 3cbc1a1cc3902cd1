import type { EventData } from '@lib/event-store';

/**
 * A pure aggregate: `decide` turns a command and the current state into new events (or throws a
 * DomainError), `evolve` folds one event into the state. No I/O, no clock, no randomness: time
 * and ids arrive inside the command.
 */
export interface Decider<State, Command, Event extends EventData> {
  initialState: () => State;
  decide: (command: Command, state: State) => Event[];
  evolve: (state: State, event: Event) => State;
}

/** Rebuilds the state from a stream's events. */
export function fold<State, Event extends EventData>(
  decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  events: Iterable<Event>,
): State {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}
