import { Injectable } from '@nestjs/common';
import { AggregateRepository, ReadYourWrites, type HandleResult } from '@lib/event-sourcing';
import { quoteDecider, type Quote, type QuoteCommand, type QuoteState } from '../domain/quote.decider';
import { QuoteNotFound } from '../domain/quote.errors';
import { quoteStream, type QuoteEvent } from '../domain/quote.events';
import { KeyedMutex } from './keyed-mutex';

export interface QuoteWrite {
  quote: Quote;
  newEvents: QuoteEvent[];
}

/**
 * Runs a command against one quote: decide on the current stream, append with the expected
 * revision (conflicts with other processes are retried on fresh state), then wait until the read
 * side shows the write. Writes to one quote from this process queue up instead of colliding, so
 * parallel revisions of a quote all land, one after the other.
 */
@Injectable()
export class QuoteWriter {
  private readonly queue = new KeyedMutex();

  constructor(
    private readonly repository: AggregateRepository,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  async execute(quoteId: string, command: QuoteCommand, actor: string): Promise<QuoteWrite> {
    const streamId = quoteStream(quoteId);
    const result: HandleResult<QuoteState, QuoteEvent> = await this.queue.run(streamId, () =>
      this.repository.handle(quoteDecider, streamId, command, { metadata: { actor }, awaitProjections: false, maxAttempts: 10, what: 'The quote' }),
    );
    if (result.position !== null) await this.readYourWrites.waitFor(result.position);
    if (!result.state) throw new QuoteNotFound();
    return { quote: result.state, newEvents: result.newEvents };
  }
}
