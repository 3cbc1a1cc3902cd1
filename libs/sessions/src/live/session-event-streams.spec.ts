import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { ReadYourWrites } from '@lib/event-sourcing';
import { Metrics } from '@lib/observability';
import { ManualClock } from '@lib/shared';
import type { SessionReader } from '../application/session-reader';
import type { SessionChangeFeed } from './session-change-feed';
import { HEARTBEAT_MS, SessionEventStreams } from './session-event-streams';

/** A response as the stream sees it: what was written, and whether it was ended. */
class FakeResponse extends EventEmitter {
  status = 0;
  chunks: string[] = [];
  writableEnded = false;
  writeHead(status: number) {
    this.status = status;
    return this;
  }
  write(chunk: string) {
    this.chunks.push(chunk);
    return true;
  }
  end() {
    this.writableEnded = true;
    this.emit('close');
  }
  get sessionEvents() {
    return this.chunks.filter((c) => c.startsWith('event: session')).map((c) => JSON.parse(c.slice(c.indexOf('data: ') + 6)));
  }
}

describe('session event streams', () => {
  let clock: ManualClock;
  let view: { session: Record<string, unknown>; changesAt: number | null };
  let onChange: ((position: number, change?: { type: string; recordedAt: number }) => void) | null;
  let unwatched: number;
  let streams: SessionEventStreams;
  const settle = () => jest.advanceTimersByTimeAsync(0);

  beforeEach(() => {
    jest.useFakeTimers();
    clock = new ManualClock(1_000_000);
    view = { session: { status: 'active', pricing: { source: 'base' } }, changesAt: null };
    onChange = null;
    unwatched = 0;
    const feed = { watch: async (_id: string, listener: (position: number, change?: { type: string; recordedAt: number }) => void) => ((onChange = listener), () => unwatched++) };
    const reader = { watchable: async () => structuredClone(view) };
    const readYourWrites = { waitFor: async () => undefined };
    streams = new SessionEventStreams(feed as unknown as SessionChangeFeed, reader as unknown as SessionReader, readYourWrites as unknown as ReadYourWrites, clock);
  });
  afterEach(() => jest.useRealTimers());

  async function open() {
    const response = new FakeResponse();
    await streams.serve('ses_1', response as unknown as ServerResponse, { 'ratelimit-limit': '120' });
    await settle();
    return response;
  }

  it('answers with an event stream, the reconnect delay and the session at once', async () => {
    const response = await open();
    expect(response.status).toBe(200);
    expect(response.chunks[0]).toBe('retry: 2000\n\n');
    expect(response.sessionEvents).toEqual([view.session]);
  });

  it('pushes a changed session after an event, and nothing when the session reads the same', async () => {
    const response = await open();
    onChange!(7);
    await settle();
    expect(response.sessionEvents).toHaveLength(1);
    view.session = { status: 'active', pricing: { source: 'external' } };
    onChange!(8);
    await settle();
    expect(response.sessionEvents).toEqual([{ status: 'active', pricing: { source: 'base' } }, view.session]);
  });

  it('pushes again when time alone changes the view (the live-pricing wait ends, the session expires)', async () => {
    view.changesAt = clock.now() + 1_000;
    const response = await open();
    view = { session: { status: 'active', pricing: { source: 'base', awaitingExternal: false } }, changesAt: null };
    clock.advance(999);
    await jest.advanceTimersByTimeAsync(999);
    expect(response.sessionEvents).toHaveLength(1);
    clock.advance(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(response.sessionEvents).toHaveLength(2);
  });

  it('sends a comment as heartbeat while nothing changes', async () => {
    const response = await open();
    await jest.advanceTimersByTimeAsync(HEARTBEAT_MS);
    expect(response.chunks.at(-1)).toMatch(/^: /);
  });

  it('stops watching and writing when the client leaves, and ends every open stream on shutdown', async () => {
    const gone = await open();
    gone.emit('close');
    expect(unwatched).toBe(1);
    const written = gone.chunks.length;
    await jest.advanceTimersByTimeAsync(HEARTBEAT_MS * 2);
    expect(gone.chunks).toHaveLength(written);

    const open1 = await open();
    const open2 = await open();
    streams.onModuleDestroy();
    expect([open1.writableEnded, open2.writableEnded]).toEqual([true, true]);
    expect(unwatched).toBe(3);
  });

  it('measures how long a partner adjustment took to reach the customer', async () => {
    const metrics = new Metrics();
    const feed = { watch: async (_id: string, listener: typeof onChange) => ((onChange = listener), () => unwatched++) };
    const reader = { watchable: async () => structuredClone(view) };
    streams = new SessionEventStreams(feed as unknown as SessionChangeFeed, reader as unknown as SessionReader, { waitFor: async () => undefined } as unknown as ReadYourWrites, clock, metrics);
    await open();
    view.session = { status: 'active', pricing: { source: 'configuration' } };
    onChange!(7, { type: 'session.v1.configurationChanged', recordedAt: clock.now() - 50 });
    await settle();
    view.session = { status: 'active', pricing: { source: 'partner' } };
    onChange!(8, { type: 'session.v1.adjustmentReceived', recordedAt: clock.now() - 120 });
    await settle();

    const histogram = (await metrics.pricingLoopLatency.get()).values;
    expect(histogram.find((v) => v.metricName === 'pricing_loop_latency_seconds_count' && v.labels.stage === 'adjustment_pushed')?.value).toBe(1);
    expect(histogram.find((v) => v.metricName === 'pricing_loop_latency_seconds_sum' && v.labels.stage === 'adjustment_pushed')?.value).toBeCloseTo(0.12);
  });
});
