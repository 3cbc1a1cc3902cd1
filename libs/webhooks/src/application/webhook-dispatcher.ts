import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { Metrics } from '@lib/observability';
import { APP_CONFIG, Clock, isTakeableOwner, processOwner, type AppConfig } from '@lib/shared';
import { afterAttempt, MAX_PAYLOAD_BYTES, postponed, type AttemptOutcome, type DeliveryRecord } from '../domain/delivery';
import { liveSecrets, targetUrl } from '../domain/organization-profile';
import { PayloadFinalizerRegistry } from '../registries';
import { signatureHeaders } from '../transport/signing';
import { WebhookSender } from '../transport/webhook-sender';
import { NotReadyToSend } from '../webhook-sources';
import { concurrencyPerOrganization, WEBHOOK_DISPATCH_SETTINGS, type WebhookDispatchSettings } from '../webhook-settings';
import { DeliverySignal } from './delivery-signal';
import { DeliveryStore } from './delivery-store';
import { WebhookOrganizations } from './webhook-organizations';

/** How long past its timeout a `processing` attempt is presumed dead (its process crashed). */
const LEASE_MARGIN_MS = 30_000;

/**
 * A `processing` record whose attempt is over for good: its lease ran out, or its process, of this
 * host, is gone; `atStart`, also one of this host that cannot be seen running, and one claimed
 * before owners were recorded (isTakeableOwner).
 */
const abandoned = (record: DeliveryRecord, now: number, atStart = false): boolean =>
  (record.leaseUntil !== null && record.leaseUntil < now) ||
  (record.leaseOwner == null ? atStart : isTakeableOwner(record.leaseOwner, atStart));

/** The longest pricing timeout an organization can set (admin API: pricingTimeoutMs ≤ 60 s). */
const MAX_PRICING_TIMEOUT_MS = 60_000;
/** Shortest pause between two looks at the queue when nothing was claimable (no busy loop). */
const MIN_RESCAN_MS = 5;
const RECOVERY_PAGE = 200;
const WRITE_RETRIES = 3;
/** When an attempt the service could not make yet (NotReadyToSend) is made again: its finalizer already waited before it gave up. */
const POSTPONED_MS = 1_000;
/** Organizations a round (Lane) visits per look at the queue; the next look goes on from there. */
const ROUND_ORGANIZATIONS = 32;

/**
 * One budget of attempts in flight. Pricing (fast-path) and ordinary deliveries each have their
 * own, so no number of slow ordinary attempts delays a live pricing event, nor the reverse.
 *
 * Within a lane, each organization has at most `perOrganization` attempts in flight. While none
 * has had due records left over for want of room, the lane is filled oldest due first. Once one
 * has, its records may fill the head of the queue, so the lane is filled by organization instead:
 * first those known to have due records (`waiting`, in turn: one served goes to the back), then,
 * at most once per poll interval, a round over every organization with pending records (one at a
 * time in id order, from the one after the organization the last round visited), which finds the
 * rest. Back to oldest first when no organization is left waiting.
 */
class Lane {
  /** claims under way plus attempts in flight */
  active = 0;
  /** the last look may have left due records for want of room: a finishing attempt looks again */
  held = false;
  /** the last look stopped a round at ROUND_ORGANIZATIONS with slots free: the next look comes soon */
  unfinished = false;
  /** organizations with due records left over, or at their cap, in the order they are served */
  readonly waiting = new Set<string>();
  /** the round under way: the organization it started after (null: the first), and whether it went back to the first */
  round: { from: string | null; wrapped: boolean } | null = null;
  lastVisited: string | null = null;
  /** when the last round ended (clock ms) */
  roundEndedAt = Number.NEGATIVE_INFINITY;
  private readonly byOrganization = new Map<string, number>();

  constructor(
    readonly fastPath: boolean,
    readonly limit: number,
    private readonly perOrganization: number,
  ) {}

  get free(): number {
    return this.limit - this.active;
  }

  /** Whether the lane is filled by organization (above) rather than oldest due first. */
  get byTurns(): boolean {
    return this.waiting.size > 0 || this.round !== null;
  }

  /** How many more attempts of this organization the lane takes now. */
  room(organizationId: string): number {
    return Math.min(this.free, this.perOrganization - (this.byOrganization.get(organizationId) ?? 0));
  }

  take(record: DeliveryRecord): void {
    this.active++;
    this.byOrganization.set(record.organizationId, (this.byOrganization.get(record.organizationId) ?? 0) + 1);
  }

  release(record: DeliveryRecord): void {
    this.active--;
    const taken = this.byOrganization.get(record.organizationId) ?? 1;
    if (taken > 1) this.byOrganization.set(record.organizationId, taken - 1);
    else this.byOrganization.delete(record.organizationId);
  }
}

/**
 * Sends pending deliveries (runs in the outbox process only, WebhookDispatchModule).
 *
 * - Fast-path records (pricing) are claimed and sent the moment they are created or redelivered;
 *   every other record is found by a look at the queue, which happens on creation, when the
 *   earliest scheduled retry is due (a timer set to that moment) and at least every
 *   pollIntervalMs (for records written by other processes).
 * - An attempt is claimed first (`pending` → `processing`, compare-and-set), then signed with the
 *   secrets live at that moment and sent; its outcome is recorded the same way.
 * - Two lanes (Lane): at most `concurrency` pricing attempts in flight, and at most `concurrency`
 *   ordinary ones, each counted apart, so pricing events never wait behind ordinary attempts
 *   (which may each take the attempt timeout) nor the reverse. A look at the queue fills each
 *   lane from its own records. Stopping waits for both.
 * - One organization has at most half of each lane in flight (concurrencyPerOrganization),
 *   so a receiver or pricing partner that hangs leaves the rest to the others.
 *   Once that cap leaves an organization's due records over, the lane is filled by organization
 *   (Lane), so its backlog neither hides the others' records nor is read through at each look.
 * - On start-up every `processing` record is returned to `pending`: its attempt died with the
 *   previous process, may or may not have reached the receiver, and is made again with the same
 *   id and generation, hence the same `webhook-id` (what receivers deduplicate on). A record
 *   whose lease runs out while this process runs is recovered the same way.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('WebhookDispatcher');
  private running = false;
  private readonly fastLane: Lane;
  private readonly ordinaryLane: Lane;
  private readonly tasks = new Set<Promise<unknown>>();
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private scan: Promise<void> | null = null;
  private scanAgain = false;
  private lastLeaseCheck = 0;
  private unsubscribe: (() => void) | null = null;
  /**
   * Whose attempts a `processing` record holds: this process, named by host, PID namespace, pid and
   * a token of its own (processOwner). At start, the outbox (one per deployment) makes again the
   * attempts of every process of its host it cannot see running (isTakeableOwner): a restart
   * after `kill -9`, in a new container too. While it runs, only those of a process it sees gone,
   * and lapsed leases: never the attempts of a live outbox it can see (until 2026-11-27 the owner
   * was the host alone).
   */
  private readonly owner = processOwner();

  constructor(
    private readonly store: DeliveryStore,
    private readonly organizations: WebhookOrganizations,
    private readonly finalizers: PayloadFinalizerRegistry,
    private readonly sender: WebhookSender,
    private readonly signal: DeliverySignal,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_DISPATCH_SETTINGS) private readonly settings: WebhookDispatchSettings,
    @Optional() @Inject(Metrics) private readonly metrics: Metrics | null = null,
  ) {
    this.fastLane = new Lane(true, settings.concurrency, concurrencyPerOrganization(settings.concurrency));
    this.ordinaryLane = new Lane(false, settings.concurrency, concurrencyPerOrganization(settings.concurrency));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.start();
  }

  /** Before the stores close: in-flight attempts finish and record their outcome. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  async start(): Promise<void> {
    if (this.running) return;
    // This host's attempts died with its previous process: made again at once. Another host's
    // outbox may still be making its own (two outboxes overlap in a rolling deploy): only once its
    // lease has run out, as while running; otherwise the receiver gets the attempt twice at once.
    const now = this.clock.now();
    const recovered = await this.recover((r) => abandoned(r, now, true));
    if (recovered) this.logger.warn(`${recovered} delivery attempt(s) interrupted by the last shutdown will be made again`);
    this.running = true;
    this.unsubscribe = this.signal.subscribe((record) => this.onPending(record));
    this.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    await this.scan;
    while (this.tasks.size) await Promise.allSettled([...this.tasks]);
    this.sender.close();
  }

  /** Looks at the queue as soon as possible. */
  wake(): void {
    this.wakeAt(0);
  }

  private onPending(record: DeliveryRecord): void {
    if (!this.running) return;
    const lane = this.laneOf(record);
    if (record.fastPath && record.scheduledFor <= this.clock.now() && lane.room(record.organizationId) > 0) {
      lane.take(record);
      this.track(this.claim(record).then((claimed) => claimed && this.launch(claimed)));
    } else {
      // The next look serves it in turn, without waiting for a round to find it.
      if (lane.byTurns && record.scheduledFor <= this.clock.now()) lane.waiting.add(record.organizationId);
      this.wakeAt(record.scheduledFor);
    }
  }

  private wakeAt(at: number): void {
    if (!this.running) return;
    const now = this.clock.now();
    if (at <= now) {
      if (this.scan) {
        this.scanAgain = true;
        return;
      }
      this.scan = this.lookAtQueue().finally(() => {
        this.scan = null;
        if (this.scanAgain) {
          this.scanAgain = false;
          this.wake();
        }
      });
      return;
    }
    if (at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.wake();
    }, at - now);
    this.timer.unref();
  }

  private async lookAtQueue(): Promise<void> {
    try {
      const now = this.clock.now();
      if (now - this.lastLeaseCheck >= this.settings.pollIntervalMs) {
        this.lastLeaseCheck = now;
        const recovered = await this.recover((r) => abandoned(r, now) && !this.inFlight.has(r.id));
        if (recovered) this.logger.warn(`${recovered} abandoned delivery attempt(s) will be made again`);
      }
      for (const lane of [this.fastLane, this.ordinaryLane]) await this.fill(lane);
      const later = this.clock.now();
      let at = later + this.settings.pollIntervalMs;
      for (const lane of [this.fastLane, this.ordinaryLane]) {
        if (lane.unfinished && lane.free > 0) at = Math.min(at, later + MIN_RESCAN_MS);
        // A held lane's due records wait for a finishing attempt of that lane, not for a timer.
        if (lane.held) continue;
        const next = await this.store.nextDueAt(lane.fastPath);
        if (next !== null) at = Math.min(at, Math.max(next, later + MIN_RESCAN_MS));
      }
      this.wakeAt(at);
    } catch (error) {
      this.logger.error(`looking at the delivery queue failed; retrying: ${String(error)}`);
      this.wakeAt(this.clock.now() + this.settings.pollIntervalMs);
    }
  }

  /** Claims due records of the lane into its free slots: oldest due first, or by organization (Lane). */
  private async fill(lane: Lane): Promise<void> {
    lane.held = false;
    lane.unfinished = false;
    if (!lane.byTurns && (await this.fillOldestFirst(lane))) return;
    lane.held = true;
    await this.serveWaiting(lane);
    if (lane.round !== null || this.clock.now() - lane.roundEndedAt >= this.settings.pollIntervalMs) await this.continueRound(lane);
  }

  /**
   * Oldest due first, while no organization's cap leaves due records over. False when one does and
   * the page was full: the others' due records may lie behind its own, so a round starts now.
   */
  private async fillOldestFirst(lane: Lane): Promise<boolean> {
    while (this.running) {
      const free = lane.free;
      if (free <= 0) {
        lane.held = true;
        return true;
      }
      const due = await this.store.findDue(this.clock.now(), free, lane.fastPath);
      const { taken, skipped } = this.take(lane, due);
      await this.claimAndLaunch(taken);
      for (const organizationId of skipped) lane.waiting.add(organizationId);
      if (skipped.size > 0) {
        lane.held = true;
        // Every due record was seen: no round needed to find the others' until the next poll.
        lane.roundEndedAt = due.length < free ? this.clock.now() : Number.NEGATIVE_INFINITY;
        return due.length < free;
      }
      if (due.length < free || taken.length === 0) return true;
    }
    return true;
  }

  /** The organizations known to have due records, in turn, each up to its room. */
  private async serveWaiting(lane: Lane): Promise<void> {
    const taken: DeliveryRecord[] = [];
    for (const organizationId of [...lane.waiting]) {
      if (!this.running || lane.free <= 0) break;
      const room = lane.room(organizationId);
      if (room <= 0) continue;
      const due = await this.store.findDue(this.clock.now(), room, lane.fastPath, organizationId);
      taken.push(...this.take(lane, due).taken);
      lane.waiting.delete(organizationId);
      if (due.length === room) lane.waiting.add(organizationId);
    }
    // Claimed together: one commit.
    await this.claimAndLaunch(taken);
  }

  /**
   * The next organizations of the lane's round, at most ROUND_ORGANIZATIONS per look: each one's
   * due records up to its room, and those with more (or at their cap) join `waiting`. A visit is
   * two index seeks (the next organization, its due records), whatever anyone's backlog.
   */
  private async continueRound(lane: Lane): Promise<void> {
    const round = (lane.round ??= { from: lane.lastVisited, wrapped: false });
    const taken: DeliveryRecord[] = [];
    try {
      for (let visited = 0; visited < ROUND_ORGANIZATIONS; visited++) {
        // A full lane: the round goes on at the next look, when an attempt finishes.
        if (!this.running || lane.free <= 0) return;
        const organizationId = await this.store.nextOrganization(lane.fastPath, lane.lastVisited, round.wrapped ? (round.from ?? undefined) : undefined);
        if (organizationId === null) {
          if (round.wrapped || round.from === null) {
            lane.round = null;
            lane.roundEndedAt = this.clock.now();
            return;
          }
          // On from the first organization, up to the one the round started after.
          round.wrapped = true;
          lane.lastVisited = null;
          continue;
        }
        lane.lastVisited = organizationId;
        const room = lane.room(organizationId);
        if (room <= 0) {
          lane.waiting.add(organizationId);
          continue;
        }
        const due = await this.store.findDue(this.clock.now(), room, lane.fastPath, organizationId);
        taken.push(...this.take(lane, due).taken);
        if (due.length === room) lane.waiting.add(organizationId);
      }
      lane.unfinished = true;
    } finally {
      await this.claimAndLaunch(taken);
    }
  }

  /** Takes a slot for each record whose organization has room in the lane; the organizations of the others were `skipped`. */
  private take(lane: Lane, records: DeliveryRecord[]): { taken: DeliveryRecord[]; skipped: Set<string> } {
    const taken: DeliveryRecord[] = [];
    const skipped = new Set<string>();
    for (const record of records) {
      if (this.inFlight.has(record.id)) continue;
      if (lane.room(record.organizationId) <= 0) {
        skipped.add(record.organizationId);
        continue;
      }
      lane.take(record);
      taken.push(record);
    }
    return { taken, skipped };
  }

  /**
   * Claims records whose slots are taken, and sends those claimed. A claim the store refused (a
   * full disk, a read-only file) ends the look at the queue with that error, after the others are
   * sent: the next look is a poll interval away (lookAtQueue). Treated as a lost race, the records
   * were found due again at once, and the look looped without end (found by a review, 2026-11-28:
   * 2,700 log lines a second on a full disk; in a test, the event loop never got a turn).
   */
  private async claimAndLaunch(records: DeliveryRecord[]): Promise<void> {
    const claims = await Promise.allSettled(records.map((record) => this.claim(record)));
    let refusal: unknown = null;
    for (const claim of claims) {
      if (claim.status === 'rejected') refusal ??= claim.reason;
      else if (claim.value) this.launch(claim.value);
    }
    if (refusal !== null) throw refusal;
  }

  private laneOf(record: DeliveryRecord): Lane {
    return record.fastPath ? this.fastLane : this.ordinaryLane;
  }

  /** `pending` → `processing`; null when another writer got there first. Releases the slot, and throws, when the store fails. */
  private async claim(record: DeliveryRecord): Promise<DeliveryRecord | null> {
    try {
      const now = this.clock.now();
      const timeout = record.fastPath ? MAX_PRICING_TIMEOUT_MS : this.settings.attemptTimeoutMs;
      const claimed = await this.store.compareAndSet(record, { ...record, status: 'processing', leaseUntil: now + timeout + LEASE_MARGIN_MS, leaseOwner: this.owner.id, updatedAt: now });
      if (!claimed) this.laneOf(record).release(record);
      return claimed;
    } catch (error) {
      this.laneOf(record).release(record);
      throw new Error(`claiming delivery ${record.id} failed: ${String(error)}`, { cause: error });
    }
  }

  private launch(record: DeliveryRecord): void {
    const lane = this.laneOf(record);
    this.inFlight.add(record.id);
    this.track(
      this.attempt(record).finally(() => {
        this.inFlight.delete(record.id);
        lane.release(record);
        if (lane.held) this.wake();
      }),
    );
  }

  private track(task: Promise<unknown>): void {
    const tracked = task.catch((error) => this.logger.error(`delivery task failed: ${String(error)}`)).finally(() => this.tasks.delete(tracked));
    this.tasks.add(tracked);
  }

  private async attempt(record: DeliveryRecord): Promise<void> {
    let outcome: AttemptOutcome | null;
    try {
      outcome = await this.deliver(record);
    } catch (error) {
      if (error instanceof NotReadyToSend) {
        this.logger.warn(`delivery ${record.id} postponed, nothing sent: ${error.message}`);
        outcome = null;
      } else {
        this.logger.error(`delivery ${record.id} could not be attempted: ${error instanceof Error ? error.message : String(error)}`);
        outcome = { delivered: false, error: 'internal_error', terminal: false };
      }
    }
    const schedule = record.fastPath ? this.config.pricingRetryScheduleMs : this.config.webhookRetryScheduleMs;
    // A record stored before a field was redacted loses it with this write.
    const redacted = { ...record, payload: this.finalizers.redact(record.type, record.payload) };
    const next = outcome ? afterAttempt(redacted, outcome, this.clock.now(), schedule) : postponed(redacted, this.clock.now(), POSTPONED_MS);
    const stored = await this.write(record, next);
    if (stored && outcome) this.observe(record, stored);
    if (stored?.status === 'pending') this.wakeAt(stored.scheduledFor);
  }

  /** Delivery outcomes, and the live pricing loop from the configuration change to its delivery. */
  private observe(attempted: DeliveryRecord, stored: DeliveryRecord): void {
    if (!this.metrics) return;
    this.metrics.deliveryAttempted(attempted.target, stored.status === 'delivered' ? 'delivered' : stored.status === 'failed' ? 'failed' : 'retry');
    // Generation 1 only: a redelivery asked for later says nothing about the loop's speed.
    if (stored.status === 'delivered' && attempted.type === 'pricing.calculated' && attempted.generation === 1) {
      this.metrics.pricingLoop('calculated_delivered', (stored.deliveredAt ?? this.clock.now()) - Date.parse(attempted.payload.timestamp));
    }
  }

  /** One attempt: the organization's URL and secrets as they are now, the finalized body, signed, sent. */
  private async deliver(record: DeliveryRecord): Promise<AttemptOutcome> {
    const organization = await this.organizations.current(record.organizationId);
    const url = organization && targetUrl(organization, record.target);
    if (!organization || !url) return { delivered: false, error: 'no_target_url', terminal: false };
    const now = this.clock.now();
    const secrets = liveSecrets(organization, now);
    if (secrets.length === 0) return { delivered: false, error: 'no_signing_secret', terminal: false };
    const finalizer = this.finalizers.get(record.type);
    const payload = finalizer
      ? await finalizer.finalize({ id: record.id, organizationId: record.organizationId, generation: record.generation, payload: structuredClone(record.payload) })
      : record.payload;
    const body = JSON.stringify(payload);
    if (Buffer.byteLength(body) > MAX_PAYLOAD_BYTES) return { delivered: false, error: 'payload_too_large', terminal: true };
    const headers = signatureHeaders({ deliveryId: record.id, generation: record.generation, eventType: record.type, timestamp: Math.floor(now / 1000), body, secrets });
    const result = await this.sender.send({
      url,
      body,
      headers,
      timeoutMs: record.target === 'pricing' ? organization.pricingTimeoutMs : this.settings.attemptTimeoutMs,
      allowPrivateNetworks: this.config.webhookAllowPrivateNetworks,
    });
    if (result.kind === 'error') return { delivered: false, error: result.error, terminal: false };
    if (result.status >= 200 && result.status < 300) return { delivered: true };
    return { delivered: false, error: `HTTP ${result.status}`, terminal: result.status === 410 };
  }

  /** Records an outcome; a store hiccup is retried, a lost compare-and-set is reported and left alone. */
  private async write(current: DeliveryRecord, next: DeliveryRecord): Promise<DeliveryRecord | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        const stored = await this.store.compareAndSet(current, next);
        if (!stored) this.logger.warn(`delivery ${current.id} changed while it was attempted; outcome ${next.status} not recorded`);
        return stored;
      } catch (error) {
        if (attempt >= WRITE_RETRIES) {
          // The record stays `processing`; its lease expiry (or the next start) makes the attempt again.
          this.logger.error(`recording the outcome of delivery ${current.id} failed: ${String(error)}`);
          return null;
        }
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  /** Returns `processing` records matching `which` to `pending`, due now. */
  private async recover(which: (record: DeliveryRecord) => boolean): Promise<number> {
    let recovered = 0;
    let after: unknown[] | undefined;
    do {
      const page = await this.store.findByStatus('processing', RECOVERY_PAGE, after);
      const now = this.clock.now();
      for (const record of page.items) {
        if (!which(record)) continue;
        if (await this.store.compareAndSet(record, { ...record, status: 'pending', leaseUntil: null, leaseOwner: null, scheduledFor: now, updatedAt: now })) recovered++;
      }
      after = page.nextAfter ?? undefined;
    } while (after);
    return recovered;
  }
}
