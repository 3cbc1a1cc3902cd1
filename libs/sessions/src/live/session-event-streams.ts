import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, OnModuleDestroy, Optional } from '@nestjs/common';
import { ReadYourWrites } from '@lib/event-sourcing';
import { Metrics } from '@lib/observability';
import { Clock, MAX_TIMER_MS, NotFound, RateLimited } from '@lib/shared';
import { SessionReader } from '../application/session-reader';
import { SessionChangeFeed, type SessionChange } from './session-change-feed';

/** The headers of a session's event stream (a HEAD of it answers with them too). */
export const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  // The customer's session, behind their token (docs/decisions/platform.md, Caching of private answers).
  'cache-control': 'no-store, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

const ADJUSTMENT_RECEIVED = 'session.v1.adjustmentReceived';

/** A comment line this often keeps proxies and browsers from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/**
 * Open streams of one session in one process, at most: a customer's tabs are a handful; more is a
 * client holding sockets open (each stream lives as long as the session, up to its idle expiry).
 */
export const MAX_STREAMS_PER_SESSION = 10;

/**
 * One customer's Server-Sent Events stream (decisions §6): `event: session` with the storefront
 * session object now and whenever it changes — by an event of the session (configuration,
 * adjustment, submit) or by time alone (the live-pricing wait ends, the session expires).
 * Pushes run one after another and an unchanged object is not sent again. An expired session
 * changes no more: the stream ends after pushing it.
 */
class SessionEventStream {
  private readonly logger = new Logger('SessionStream');
  private last: string | null = null;
  private pending: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private unwatch: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly sessionId: string,
    private readonly response: ServerResponse,
    private readonly reader: SessionReader,
    private readonly readYourWrites: ReadYourWrites,
    private readonly clock: Clock,
    private readonly onClosed: () => void,
    private readonly metrics: Metrics | null,
  ) {}

  async start(feed: SessionChangeFeed, headers: OutgoingHttpHeaders): Promise<void> {
    this.response.on('close', () => this.close());
    this.response.writeHead(200, { ...headers, ...EVENT_STREAM_HEADERS });
    this.write('retry: 2000\n\n');
    try {
      // Watch first, then read: a change landing in between is pushed, never missed.
      this.unwatch = await feed.watch(this.sessionId, (position, change) => this.refresh(position, change));
    } catch (error) {
      this.logger.error(`cannot follow session changes: ${String(error)}`);
      this.close();
      return;
    }
    if (this.closed) return this.unwatch();
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.refresh(0);
  }

  /** `position`: the log position of the event that changed the session (0: nothing to wait for). */
  private refresh(position: number, change?: SessionChange): void {
    this.pending = this.pending.then(() => this.push(position, change)).catch((error) => {
      if (error instanceof NotFound) return this.close();
      this.logger.warn(`could not push session ${this.sessionId}: ${String(error)}`);
    });
  }

  private async push(position: number, change?: SessionChange): Promise<void> {
    if (this.closed) return;
    // The read model may be a moment behind the event; a lagging read side still pushes what it has.
    if (position > 0) await this.readYourWrites.waitFor(position).catch(() => undefined);
    const { session, changesAt } = await this.reader.watchable(this.sessionId);
    const json = JSON.stringify(session);
    if (json !== this.last) {
      this.last = json;
      this.write(`event: session\ndata: ${json}\n\n`);
      // The live pricing loop's last leg: a partner's adjustment reaching the customer.
      if (change?.type === ADJUSTMENT_RECEIVED) this.metrics?.pricingLoop('adjustment_pushed', this.clock.now() - change.recordedAt);
    }
    if (session.status === 'expired') return this.close();
    this.schedule(changesAt);
  }

  private schedule(changesAt: number | null): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (changesAt === null || this.closed) return;
    this.timer = setTimeout(() => this.refresh(0), Math.min(Math.max(changesAt - this.clock.now(), 0), MAX_TIMER_MS));
  }

  private write(chunk: string): void {
    if (!this.closed && !this.response.writableEnded) this.response.write(chunk);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unwatch?.();
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (!this.response.writableEnded) this.response.end();
    this.onClosed();
  }
}

/** The open session streams of this process; each ends when its client leaves or the process stops. */
@Injectable()
export class SessionEventStreams implements OnModuleDestroy {
  /** the open streams of each session */
  private readonly open = new Map<string, Set<SessionEventStream>>();

  constructor(
    private readonly feed: SessionChangeFeed,
    private readonly reader: SessionReader,
    private readonly readYourWrites: ReadYourWrites,
    private readonly clock: Clock,
    @Optional() @Inject(Metrics) private readonly metrics: Metrics | null = null,
  ) {}

  /** 429 `rate_limited` when the session has MAX_STREAMS_PER_SESSION streams open here already. */
  admit(sessionId: string): void {
    if ((this.open.get(sessionId)?.size ?? 0) < MAX_STREAMS_PER_SESSION) return;
    throw new RateLimited(`This session has ${MAX_STREAMS_PER_SESSION} live streams open already; close one first.`, HEARTBEAT_MS / 1000);
  }

  /**
   * Serves the stream on a response the caller has taken over from the framework (after admit, in
   * the same turn); never throws.
   */
  async serve(sessionId: string, response: ServerResponse, headers: OutgoingHttpHeaders): Promise<void> {
    const streams = this.open.get(sessionId) ?? new Set<SessionEventStream>();
    this.open.set(sessionId, streams);
    const stream: SessionEventStream = new SessionEventStream(sessionId, response, this.reader, this.readYourWrites, this.clock, () => this.forget(stream, sessionId), this.metrics);
    streams.add(stream);
    await stream.start(this.feed, headers);
  }

  private forget(stream: SessionEventStream, sessionId: string): void {
    const streams = this.open.get(sessionId);
    streams?.delete(stream);
    if (streams?.size === 0) this.open.delete(sessionId);
  }

  /** Ends every open stream (at shutdown, before the server drains; clients reconnect after `retry`). */
  closeAll(): void {
    for (const stream of [...this.open.values()].flatMap((streams) => [...streams])) stream.close();
  }

  onModuleDestroy(): void {
    this.closeAll();
  }
}
