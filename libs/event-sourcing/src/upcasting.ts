import type { RecordedEvent } from '@lib/event-store';

/**
 * Turns an old stored event shape into the current one when it is read. A shipped event type
 * never changes; a new version gets a new type name and an upcaster from the old one.
 */
export type Upcaster = (event: RecordedEvent) => RecordedEvent;

const upcasters = new Map<string, Upcaster>();

export function registerUpcaster(fromType: string, upcaster: Upcaster): void {
  upcasters.set(fromType, upcaster);
}

export function upcast(event: RecordedEvent): RecordedEvent {
  let current = event;
  for (let hops = 0; hops < 10; hops++) {
    const next = upcasters.get(current.type);
    if (!next) return current;
    current = next(current);
  }
  throw new Error(`upcaster chain for ${event.type} does not terminate`);
}
