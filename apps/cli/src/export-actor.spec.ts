import type { RecordedEvent } from '@lib/event-store';
import { actorOf } from './commands';

const recorded = (actor: unknown): RecordedEvent =>
  ({ id: 'e1', streamId: 'session-ses_1', revision: 0, position: 1, type: 'session.v1.priced', data: {}, metadata: { actor }, recordedAt: 0 }) as RecordedEvent;

describe('the actor of an exported event', () => {
  it.each([
    ['apiKey:key_1', { type: 'api_key', id: 'key_1' }],
    ['admin', { type: 'admin' }],
    ['customer:ses_1', { type: 'customer', id: 'ses_1' }],
    ['pricing:evt_1', { type: 'pricing_partner', id: 'evt_1' }],
    ['system', { type: 'system' }],
    ['system:quote-expiry', { type: 'system', id: 'quote-expiry' }],
    ['robot:r2', { type: 'other', id: 'robot:r2' }],
    [undefined, { type: 'unrecorded' }],
    ['', { type: 'unrecorded' }],
  ])('given the recorded actor %j, then the export writes %j: a type, and an id when it has one', (actor, expected) => {
    expect(actorOf(recorded(actor))).toEqual(expected);
  });
});
