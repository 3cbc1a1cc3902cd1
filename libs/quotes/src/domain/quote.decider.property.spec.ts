import fc from 'fast-check';
import { DomainError } from '@lib/shared';
import { quoteDecider, type QuoteCommand, type QuoteState } from './quote.decider';
import { DAY_MS, type QuoteEvent, type QuoteStatus } from './quote.events';
import { createQuote } from './testing/quote-commands';

const ORG = 'org_1';
const T0 = Date.UTC(2026, 0, 1);
const LINK = { tokenHash: 'hash-1', customerUrl: 'http://localhost:3000/q/token-1' };

/** api-v1 "States and transitions" plus decisions §7: every status change a quote may make. */
const ALLOWED: Record<QuoteStatus, QuoteStatus[]> = {
  draft: ['sent'],
  sent: ['sent', 'viewed', 'draft', 'accepted', 'rejected', 'expired'],
  viewed: ['draft', 'accepted', 'rejected', 'expired'],
  accepted: [],
  rejected: [],
  expired: [],
};

const lines = fc.array(
  fc.record({
    description: fc.constantFrom('Window', 'Installation', 'Sill'),
    quantity: fc.integer({ min: 1, max: 20 }),
    unitPrice: fc.integer({ min: 0, max: 500_000 }).map((cents) => cents / 100),
    itemType: fc.constantFrom('window', 'labor'),
    itemKey: fc.constant(null),
    externalRef: fc.constant(null),
  }),
  { minLength: 0, maxLength: 4 },
);

/** A command at a time offset (hours after T0); times only move forward in a history. */
const command = (hours: number): fc.Arbitrary<QuoteCommand> => {
  const at = T0 + hours * 3_600_000;
  return fc.oneof(
    fc.record({ revise: fc.boolean(), taxRate: fc.constantFrom(0, 9, 21), validityDays: fc.constantFrom(1, 14, 30) }).map(
      ({ revise, taxRate, validityDays }): QuoteCommand => ({ type: 'changeQuote', organizationId: ORG, terms: { taxRate, validityDays }, revise, ifMatch: null, at }),
    ),
    fc.record({ revise: fc.boolean(), lineItems: lines }).map(
      ({ revise, lineItems }): QuoteCommand => ({ type: 'replaceLineItems', organizationId: ORG, lineItems, revise, changeDescription: null, ifMatch: null, at }),
    ),
    fc.constant<QuoteCommand>({ type: 'sendQuote', organizationId: ORG, recipients: ['ada@example.com'], locale: null, newLink: LINK, ifMatch: null, at }),
    fc.constant<QuoteCommand>({ type: 'viewQuote', tokenHash: LINK.tokenHash, at }),
    fc.constant<QuoteCommand>({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: null, at }),
    fc.constant<QuoteCommand>({ type: 'rejectQuote', tokenHash: LINK.tokenHash, name: null, reason: null, at }),
    fc.constant<QuoteCommand>({ type: 'noticeExpiringSoon', at }),
    fc.constant<QuoteCommand>({ type: 'expireQuote', at }),
  );
};

/** Histories of commands with increasing times (up to ~40 days, so expiry happens in some). */
const histories = fc
  .array(fc.integer({ min: 0, max: 48 }), { minLength: 1, maxLength: 40 })
  .chain((gaps) => {
    let hours = 0;
    return fc.tuple(...gaps.map((gap) => command((hours += gap))));
  });

const created = (): QuoteEvent[] =>
  quoteDecider.decide(createQuote('quo_1', ORG, [{ description: 'Window', quantity: 1, unitPrice: 100, itemType: 'window', itemKey: null, externalRef: null }], T0), null);

/** Runs a history; refused commands (domain errors) change nothing, as over the API. */
function run(commands: QuoteCommand[]): { states: NonNullable<QuoteState>[]; events: QuoteEvent[] } {
  const events = created();
  let state = events.reduce(quoteDecider.evolve, quoteDecider.initialState()) as NonNullable<QuoteState>;
  const states = [state];
  for (const cmd of commands) {
    let produced: QuoteEvent[];
    try {
      produced = quoteDecider.decide(cmd, state);
    } catch (error) {
      if (error instanceof DomainError) continue;
      throw error;
    }
    for (const event of produced) {
      state = quoteDecider.evolve(state, event) as NonNullable<QuoteState>;
      events.push(event);
      states.push(state);
    }
  }
  return { states, events };
}

describe('quote decider invariants (properties)', () => {
  it('versions start at 1 and only ever grow by one, by a revision', () => {
    fc.assert(
      fc.property(histories, (commands) => {
        const { states, events } = run(commands);
        expect(states[0].version).toBe(1);
        for (let i = 1; i < states.length; i++) {
          const step = states[i].version - states[i - 1].version;
          expect(step === 0 || step === 1).toBe(true);
          if (step === 1) expect(events[i].type).toMatch(/revised$/);
        }
      }),
    );
  });

  it('status changes only along the documented lifecycle', () => {
    fc.assert(
      fc.property(histories, (commands) => {
        const { states } = run(commands);
        expect(states[0].status).toBe('draft');
        for (let i = 1; i < states.length; i++) {
          const from = states[i - 1].status;
          const to = states[i].status;
          if (from !== to || to === 'sent') expect([from, ...ALLOWED[from]]).toContain(to);
        }
      }),
    );
  });

  it('accepted, rejected and expired are final: nothing but externalRef changes them', () => {
    fc.assert(
      fc.property(histories, (commands) => {
        const { states } = run(commands);
        const final = states.findIndex((s) => ['accepted', 'rejected', 'expired'].includes(s.status));
        if (final < 0) return;
        for (const later of states.slice(final + 1)) {
          expect(later.status).toBe(states[final].status);
          expect(later.version).toBe(states[final].version);
          expect(later.totals).toEqual(states[final].totals);
        }
      }),
    );
  });

  it('a quote is never accepted at or after its validUntil', () => {
    fc.assert(
      fc.property(histories, (commands) => {
        const { events, states } = run(commands);
        events.forEach((event, i) => {
          if (event.type === 'quote.v1.accepted') expect(event.data.at).toBeLessThan(states[i - 1].validUntil);
        });
      }),
    );
  });

  it('totals always agree with the line items and the tax rate', () => {
    fc.assert(
      fc.property(histories, (commands) => {
        for (const state of run(commands).states) {
          const sum = state.lineItems.reduce((acc, item) => acc + Math.round(item.total * 100), 0);
          expect(Math.round(state.totals.subtotal * 100)).toBe(sum);
          expect(Math.round(state.totals.total * 100)).toBe(sum + Math.round(state.totals.taxAmount * 100));
          expect(state.validUntil).toBeGreaterThan(T0 - DAY_MS);
        }
      }),
    );
  });
});
