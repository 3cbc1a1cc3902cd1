import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { MarkSubmissionQuoted } from '@lib/submissions';
import { AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { EventStore, WrongExpectedRevisionError, type RecordedEvent } from '@lib/event-store';
import { ReadStore } from '@lib/read-store';
import { ConcurrentModification } from '@lib/shared';
import { quoteDecider, quoteNumberOf, type QuoteDraft } from '../domain/quote.decider';
import { QUOTE_NUMBER_STREAM, quoteNumberStream, type QuoteNumberReserved } from '../domain/quote-number.events';
import { quoteStream, type QuoteCreated } from '../domain/quote.events';
import { KeyedMutex } from './keyed-mutex';

type Reservation = QuoteNumberReserved['data'];

export interface AllocatedQuote {
  quoteId: string;
  quoteNumber: string;
}

const RECOVERY_CHECKPOINT = 'quote-numbers:recovery';
const RECOVERY_BATCH = 500;
/** Other processes taking numbers of the same organization at the same moment: retry this often. */
const MAX_RESERVE_ATTEMPTS = 50;

/**
 * Gap-free quote numbers per organization and year without multi-stream transactions
 * (docs/decisions/quote-numbers.md). A number is taken by appending a reservation, carrying the
 * whole new quote, to the counter stream at its expected revision; the quote stream is created
 * from the reservation afterwards. Whatever stops in between, the next allocation of that counter
 * (or the next start-up) completes the reservation, so every number ends up on exactly one quote.
 */
@Injectable()
export class QuoteNumberAllocator implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('QuoteNumbers');
  private readonly counters = new KeyedMutex();
  /** last known revision per counter stream, so a tail read does not start from the beginning */
  private readonly tailHints = new Map<string, number>();
  private startupRecovery: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: EventStore,
    private readonly reads: ReadStore,
    private readonly repository: AggregateRepository,
    private readonly readYourWrites: ReadYourWrites,
    private readonly commands: CommandBus,
  ) {}

  onApplicationBootstrap(): void {
    // In the background: start-up must not wait for it, and every allocation recovers its own counter first anyway.
    this.startupRecovery = this.recoverAll().then(
      () => undefined,
      (error) => this.logger.error(`start-up recovery of quote numbers failed: ${String(error)}`),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.startupRecovery;
  }

  /**
   * Numbers and creates a quote; returns once the quote is readable and its submission is marked
   * quoted. `requested`: the draft's id is a keyed request's (idempotentId), which an earlier
   * attempt of the request may have taken; a new id never is, and is not looked up.
   */
  async create(draft: QuoteDraft, actor: string, options: { requested?: boolean } = {}): Promise<AllocatedQuote> {
    const year = new Date(draft.at).getUTCFullYear();
    const counter = quoteNumberStream(draft.organizationId, year);
    // A draft the quote would refuse must fail here, before its number is reserved: a stored
    // reservation is completed into its quote by every later allocation of the counter.
    quoteDecider.decide({ type: 'createQuote', quoteNumber: quoteNumberOf(year, 1), ...draft }, quoteDecider.initialState());
    const { reservation, position } = await this.counters.run(counter, async () => {
      const taken = await this.reserve(counter, year, draft, actor, options.requested ?? false);
      return { reservation: taken, position: (await this.createQuote(taken, actor)).position };
    });
    // The client is told which quote it made: its answer is kept under an Idempotency-Key.
    await this.readYourWrites.waitFor(position, { quoteId: reservation.quoteId, quoteNumber: reservation.quoteNumber });
    await this.markSubmissionQuoted(reservation, actor);
    return { quoteId: reservation.quoteId, quoteNumber: reservation.quoteNumber };
  }

  /** Completes every reservation since the last start-up whose quote does not exist. */
  async recoverAll(): Promise<number> {
    let after = (await this.reads.getCheckpoint(RECOVERY_CHECKPOINT)) ?? 0;
    let completed = 0;
    for (;;) {
      const batch = await this.events.readAll({ after, maxCount: RECOVERY_BATCH, filter: { streamPrefixes: [QUOTE_NUMBER_STREAM] } });
      for (const event of batch) if (await this.completeIfMissing(event)) completed++;
      if (batch.length > 0) {
        after = batch[batch.length - 1].position;
        await this.reads.saveCheckpoint(RECOVERY_CHECKPOINT, after);
      }
      if (batch.length < RECOVERY_BATCH) return completed;
    }
  }

  private async reserve(counter: string, year: number, draft: QuoteDraft, actor: string, requested: boolean): Promise<Reservation> {
    for (let attempt = 1; ; attempt++) {
      const last = await this.readLast(counter);
      // Only the newest reservation can be incomplete: each one is appended after its predecessor was completed.
      if (last) await this.completeIfMissing(last);
      // A retry of a keyed request whose first attempt numbered this quote (its id is the same,
      // see idempotentId) and lost its answer: that quote it is, with its number. No second one.
      const made = requested ? await this.createdBefore(draft) : null;
      if (made) return made;
      const sequence = last ? (last.data as Reservation).sequence + 1 : 1;
      const reserved: QuoteNumberReserved = {
        type: 'quoteNumber.v1.reserved',
        data: { organizationId: draft.organizationId, year, sequence, quoteNumber: quoteNumberOf(year, sequence), quoteId: draft.quoteId, draft, at: draft.at },
      };
      try {
        const result = await this.events.appendToStream(counter, [{ ...reserved, metadata: { actor } }], last ? last.revision : 'no_stream');
        this.tailHints.set(counter, result.nextRevision);
        return reserved.data;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (attempt >= MAX_RESERVE_ATTEMPTS) throw new ConcurrentModification('The quote number counter');
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));
      }
    }
  }

  /** The reservation of the quote with the draft's id, when that quote exists already (only a requested id can be taken twice). */
  private async createdBefore(draft: QuoteDraft): Promise<Reservation | null> {
    const [first] = await this.events.readStream(quoteStream(draft.quoteId), { maxCount: 1 });
    if (!first) return null;
    const created = first as unknown as QuoteCreated;
    if (created.type !== 'quote.v1.created' || created.data.organizationId !== draft.organizationId) throw new ConcurrentModification('The quote');
    const { quoteNumber } = created.data;
    const [year, sequence] = quoteNumber.split('-').slice(1).map(Number);
    return { organizationId: draft.organizationId, year, sequence, quoteNumber, quoteId: draft.quoteId, draft, at: draft.at };
  }

  /** Appends the quote's created event from its reservation; `created` is false when someone else did it first. */
  private async createQuote(reservation: Reservation, actor: string): Promise<{ position: number; created: boolean }> {
    const streamId = quoteStream(reservation.quoteId);
    const result = await this.repository.handle(
      quoteDecider,
      streamId,
      { type: 'createQuote', quoteNumber: reservation.quoteNumber, ...reservation.draft },
      { metadata: { actor }, awaitProjections: false, what: 'The quote' },
    );
    if (result.position !== null) return { position: result.position, created: true };
    const [created] = await this.events.readStream(streamId, { maxCount: 1 });
    return { position: created.position, created: false };
  }

  private async completeIfMissing(event: RecordedEvent): Promise<boolean> {
    const reservation = event.data as Reservation;
    const exists = (await this.events.readStream(quoteStream(reservation.quoteId), { maxCount: 1 })).length > 0;
    if (exists) return false;
    if (!this.completable(reservation)) return false;
    const actor = typeof event.metadata.actor === 'string' ? event.metadata.actor : 'system';
    if (!(await this.createQuote(reservation, actor)).created) return false;
    this.logger.warn(`completed interrupted creation of ${reservation.quoteNumber} (${reservation.quoteId})`);
    await this.markSubmissionQuoted(reservation, actor);
    return true;
  }

  /**
   * Whether the reservation's draft makes a quote. A draft is checked before its number is
   * reserved, so one that does not was stored by a version of the product that let it through.
   * Retrying it would fail at every allocation of the counter and stop the organization's quoting
   * for good; it is left incomplete instead, and its number is the one gap (logged as an error).
   */
  private completable(reservation: Reservation): boolean {
    try {
      quoteDecider.decide({ type: 'createQuote', quoteNumber: reservation.quoteNumber, ...reservation.draft }, quoteDecider.initialState());
      return true;
    } catch (error) {
      this.logger.error(`the reservation of ${reservation.quoteNumber} (${reservation.quoteId}) cannot become a quote, and the number stays unused: ${String(error)}`);
      return false;
    }
  }

  /**
   * decisions §7: a new quote moves its submission to `quoted`. The quote exists whatever happens
   * here, so a failure is logged rather than turned into an error the client would retry.
   */
  private async markSubmissionQuoted(reservation: Reservation, actor: string): Promise<void> {
    const { organizationId, submissionId, quoteId } = reservation.draft;
    try {
      await this.commands.execute(new MarkSubmissionQuoted(organizationId, submissionId, quoteId, actor));
    } catch (error) {
      this.logger.error(`could not mark submission ${submissionId} quoted after ${reservation.quoteNumber}: ${String(error)}`);
    }
  }

  /**
   * The newest event of a counter stream. The stream grows by one reservation per quote, so it is
   * read from the last known revision, found by an exponential then binary search on a cold start
   * instead of reading a year of reservations.
   */
  private async readLast(counter: string): Promise<RecordedEvent | null> {
    const hint = this.tailHints.get(counter);
    const from = hint ?? (await this.lastRevision(counter));
    if (from < 0) return null;
    const events = await this.events.readStream(counter, { fromRevision: from });
    if (events.length === 0) {
      if (hint === undefined) return null;
      this.tailHints.delete(counter);
      return this.readLast(counter);
    }
    const last = events[events.length - 1];
    this.tailHints.set(counter, last.revision);
    return last;
  }

  private async lastRevision(streamId: string): Promise<number> {
    const exists = async (revision: number) => (await this.events.readStream(streamId, { fromRevision: revision, maxCount: 1 })).length > 0;
    if (!(await exists(0))) return -1;
    let low = 0;
    let step = 1;
    while (await exists(low + step)) {
      low += step;
      step *= 2;
    }
    let high = low + step;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (await exists(middle)) low = middle;
      else high = middle;
    }
    return low;
  }
}
