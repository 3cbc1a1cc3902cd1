import { fold } from '@lib/event-sourcing';
import { AmountTooLarge, PreconditionFailed, REQUEST_RETRY_WINDOW_MS } from '@lib/shared';
import { quoteDecider, quoteETag, quoteNumberOf, type QuoteCommand, type QuoteDraft } from './quote.decider';
import { QuoteNotActionable, QuoteNotEditable, QuoteNotFound, QuoteNotSendable, QuoteVersionNotCurrent, RevisionRequired } from './quote.errors';
import { DAY_MS, type QuoteEvent, type QuoteEventSubject, type QuoteLineInput, type QuoteStatus } from './quote.events';

const ORG = 'org_1';
const QUOTE = 'quo_1';
const NUMBER = 'Q-2026-000001';
const T0 = Date.UTC(2026, 0, 1);
const HOUR = 60 * 60 * 1000;
const LINK = { tokenHash: 'hash-1', customerUrl: 'http://localhost:3000/q/token-1' };
const OTHER_LINK = { tokenHash: 'hash-2', customerUrl: 'http://localhost:3000/q/token-2' };

/** given events, when a command, then these events (or this error). */
function given(...history: QuoteEvent[]) {
  const state = fold(quoteDecider, history);
  return {
    when: (command: QuoteCommand) => ({
      then: (...expected: QuoteEvent[]) => expect(quoteDecider.decide(command, state)).toEqual(expected),
      thenThrows: (error: new (...args: never[]) => Error) => expect(() => quoteDecider.decide(command, state)).toThrow(error),
      result: () => quoteDecider.decide(command, state),
    }),
  };
}

const line = (overrides: Partial<QuoteLineInput> = {}): QuoteLineInput => ({
  description: 'Tilt-turn window',
  quantity: 2,
  unitPrice: 100.5,
  itemType: 'window',
  itemKey: null,
  externalRef: null,
  ...overrides,
});

const draft: QuoteDraft = {
  quoteId: QUOTE,
  organizationId: ORG,
  submissionId: 'sub_1',
  customer: { name: 'Ada', email: 'ada@example.com' },
  locale: 'nl',
  terms: { currency: 'EUR', taxRate: 21, validityDays: 30, reference: null, notes: null },
  lineItems: [line(), line({ description: 'Installation', quantity: 1, unitPrice: 50, itemType: 'labor' })],
  pricingSource: 'base',
  at: T0,
};

const subject = (status: QuoteStatus, version = 1, total = 303.71): QuoteEventSubject => ({
  quote: { id: QUOTE, quoteNumber: NUMBER, version, status, total, currency: 'EUR' },
  customer: { name: 'Ada', email: 'ada@example.com' },
  submission: { id: 'sub_1' },
});

const pricedLines = [
  { description: 'Tilt-turn window', quantity: 2, unitPrice: 100.5, total: 201, itemType: 'window', itemKey: null, externalRef: null, order: 0 },
  { description: 'Installation', quantity: 1, unitPrice: 50, total: 50, itemType: 'labor', itemKey: null, externalRef: null, order: 1 },
] as const;

const created: QuoteEvent = {
  type: 'quote.v1.created',
  data: {
    organizationId: ORG,
    quoteId: QUOTE,
    quoteNumber: NUMBER,
    submissionId: 'sub_1',
    locale: 'nl',
    terms: draft.terms,
    lineItems: pricedLines.map((l) => ({ ...l })),
    totals: { subtotal: 251, taxAmount: 52.71, total: 303.71 },
    pricingSource: 'base',
    validUntil: T0 + 30 * DAY_MS,
    ...subject('draft'),
    at: T0,
  },
};

const sentEvent = (at: number, resend = false, version = 1): QuoteEvent => ({
  type: 'quote.v1.sent',
  data: {
    organizationId: ORG,
    quoteId: QUOTE,
    ...subject('sent', version),
    recipients: ['ada@example.com'],
    locale: 'nl',
    sentAt: at,
    validUntil: at + 30 * DAY_MS,
    customerUrl: LINK.customerUrl,
    tokenHash: LINK.tokenHash,
    resend,
    at,
  },
});

const sent = sentEvent(T0 + HOUR);
const viewed: QuoteEvent = { type: 'quote.v1.viewed', data: { organizationId: ORG, quoteId: QUOTE, ...subject('viewed'), at: T0 + 2 * HOUR } };
const accepted: QuoteEvent = { type: 'quote.v1.accepted', data: { organizationId: ORG, quoteId: QUOTE, ...subject('accepted'), name: 'Ada', at: T0 + 3 * HOUR } };
const rejected: QuoteEvent = { type: 'quote.v1.rejected', data: { organizationId: ORG, quoteId: QUOTE, ...subject('rejected'), name: null, reason: 'Too expensive', at: T0 + 3 * HOUR } };
const expired: QuoteEvent = {
  type: 'quote.v1.expired',
  data: { organizationId: ORG, quoteId: QUOTE, ...subject('expired'), validUntil: T0 + HOUR + 30 * DAY_MS, at: T0 + HOUR + 30 * DAY_MS },
};

const AT = T0 + 5 * HOUR;
type Command<T extends QuoteCommand['type']> = Extract<QuoteCommand, { type: T }>;
const change = (overrides: Partial<Command<'changeQuote'>> = {}): QuoteCommand => ({
  type: 'changeQuote',
  organizationId: ORG,
  terms: {},
  revise: false,
  ifMatch: null,
  at: AT,
  ...overrides,
});
const replace = (overrides: Partial<Command<'replaceLineItems'>> = {}): QuoteCommand => ({
  type: 'replaceLineItems',
  organizationId: ORG,
  lineItems: [line({ description: 'Triple glazing', quantity: 1, unitPrice: 99.99, itemType: 'material' })],
  revise: false,
  changeDescription: null,
  ifMatch: null,
  at: AT,
  ...overrides,
});
const send = (overrides: Partial<Command<'sendQuote'>> = {}): QuoteCommand => ({
  type: 'sendQuote',
  organizationId: ORG,
  recipients: ['ada@example.com'],
  locale: null,
  newLink: LINK,
  ifMatch: null,
  at: AT,
  ...overrides,
});
const replacedLines = [{ description: 'Triple glazing', quantity: 1, unitPrice: 99.99, total: 99.99, itemType: 'material', itemKey: null, externalRef: null, order: 0 }] as const;

describe('quote decider', () => {
  describe('createQuote', () => {
    it('given no quote, then a draft version 1 is created with server-side line totals, tax and validUntil = createdAt + validityDays', () => {
      given().when({ type: 'createQuote', quoteNumber: NUMBER, ...draft }).then(created);
    });

    it('given the quote already exists (a reservation completed twice), then nothing happens', () => {
      given(created).when({ type: 'createQuote', quoteNumber: NUMBER, ...draft }).then();
    });

    it('given amounts that binary floats get wrong, then totals are exact decimals rounded half-up', () => {
      const [event] = given()
        .when({ type: 'createQuote', quoteNumber: NUMBER, ...draft, terms: { ...draft.terms, taxRate: 10 }, lineItems: [line({ quantity: 3, unitPrice: 0.1 }), line({ quantity: 1, unitPrice: 0.005 })] })
        .result();
      expect(event.type === 'quote.v1.created' && [event.data.lineItems.map((l) => l.total), event.data.totals]).toEqual([[0.3, 0.01], { subtotal: 0.31, taxAmount: 0.03, total: 0.34 }]);
    });

    it('formats quote numbers as Q-<year>-<6 digits>', () => {
      expect(quoteNumberOf(2026, 1)).toBe('Q-2026-000001');
      expect(quoteNumberOf(2027, 123456)).toBe('Q-2027-123456');
    });
  });

  describe('changeQuote (PATCH)', () => {
    it('given a draft, when terms change, then only the changed terms apply directly with recomputed totals', () => {
      given(created)
        .when(change({ terms: { taxRate: 9, notes: 'Delivery in May', reference: null } }))
        .then({
          type: 'quote.v1.termsChanged',
          data: { organizationId: ORG, quoteId: QUOTE, version: 1, changes: { taxRate: 9, notes: 'Delivery in May' }, totals: { subtotal: 251, taxAmount: 22.59, total: 273.59 }, validUntil: T0 + 30 * DAY_MS, at: AT },
        });
    });

    it('given a draft, when validityDays changes, then validUntil is recomputed from createdAt', () => {
      given(created)
        .when(change({ terms: { validityDays: 10 } }))
        .then({
          type: 'quote.v1.termsChanged',
          data: { organizationId: ORG, quoteId: QUOTE, version: 1, changes: { validityDays: 10 }, totals: created.data.totals as never, validUntil: T0 + 10 * DAY_MS, at: AT },
        });
    });

    it('given a draft, when the currency changes, then every line is re-priced in the new minor unit', () => {
      const [event] = given(created).when(change({ terms: { currency: 'JPY' } })).result();
      expect(event).toMatchObject({
        type: 'quote.v1.termsChanged',
        data: { changes: { currency: 'JPY' }, lineItems: [{ unitPrice: 100.5, total: 201 }, { total: 50 }], totals: { subtotal: 251, taxAmount: 53, total: 304 } },
      });
    });

    it('given a draft, when the terms equal the current ones, then nothing happens', () => {
      given(created).when(change({ terms: { taxRate: 21, currency: 'EUR' } })).then();
    });

    it.each(['sent', 'viewed'] as const)('given a %s quote, when terms change without revise, then revision_required and nothing applies (not even externalRef)', (status) => {
      given(created, sent, ...(status === 'viewed' ? [viewed] : []))
        .when(change({ terms: { notes: 'x' }, externalRef: 'crm:quote:1' }))
        .thenThrows(RevisionRequired);
    });

    it.each(['sent', 'viewed'] as const)('given a %s quote, when terms change with revise, then version 2 is a draft with the changes', (status) => {
      given(created, sent, ...(status === 'viewed' ? [viewed] : []))
        .when(change({ terms: { validityDays: 14, notes: 'Revised price' }, revise: true }))
        .then({
          type: 'quote.v1.revised',
          data: {
            organizationId: ORG,
            quoteId: QUOTE,
            fromVersion: 1,
            version: 2,
            changeDescription: 'Terms changed: validityDays, notes',
            changes: { validityDays: 14, notes: 'Revised price' },
            totals: created.data.totals as never,
            validUntil: T0 + HOUR + 14 * DAY_MS,
            at: AT,
          },
        });
    });

    it.each([
      ['accepted', accepted],
      ['rejected', rejected],
      ['expired', expired],
    ])('given a quote that is %s, when terms change (even with revise), then quote_not_editable', (_status, final) => {
      given(created, sent, final).when(change({ terms: { notes: 'x' }, revise: true })).thenThrows(QuoteNotEditable);
    });

    it.each([
      ['draft', []],
      ['sent', [sent]],
      ['viewed', [sent, viewed]],
      ['accepted', [sent, accepted]],
      ['rejected', [sent, rejected]],
      ['expired', [sent, expired]],
    ] as Array<[string, QuoteEvent[]]>)('given a quote that is %s, when only externalRef changes, then it applies without a new version', (_status, history) => {
      const at = T0 + 40 * DAY_MS;
      given(created, ...history)
        .when(change({ externalRef: 'crm:quote:42', at }))
        .then({ type: 'quote.v1.externalRefChanged', data: { organizationId: ORG, quoteId: QUOTE, externalRef: 'crm:quote:42', at } });
    });

    it('given the same externalRef, then nothing happens', () => {
      const refSet: QuoteEvent = { type: 'quote.v1.externalRefChanged', data: { organizationId: ORG, quoteId: QUOTE, externalRef: 'crm:1', at: T0 } };
      given(created, refSet).when(change({ externalRef: 'crm:1' })).then();
    });

    it('given a quote of another organization or none, then not_found', () => {
      given(created).when(change({ organizationId: 'org_other', terms: { notes: 'x' } })).thenThrows(QuoteNotFound);
      given().when(change({ terms: { notes: 'x' } })).thenThrows(QuoteNotFound);
    });
  });

  describe('If-Match', () => {
    const etag = quoteETag({ version: 1, updatedAt: T0 });

    it('given the current ETag or *, then the change applies', () => {
      expect(given(created).when(change({ terms: { notes: 'a' }, ifMatch: [etag] })).result()).toHaveLength(1);
      expect(given(created).when(change({ terms: { notes: 'a' }, ifMatch: ['"9-1"', '*'] })).result()).toHaveLength(1);
    });

    it('given another ETag, then precondition_failed on every write', () => {
      given(created).when(change({ terms: { notes: 'a' }, ifMatch: ['"1-0"'] })).thenThrows(PreconditionFailed);
      given(created).when(replace({ ifMatch: ['"1-0"'] })).thenThrows(PreconditionFailed);
      given(created).when(send({ ifMatch: ['"1-0"'] })).thenThrows(PreconditionFailed);
    });

    it('given two changes in the same millisecond, then each state still has its own ETag', () => {
      const first = given(created).when(change({ terms: { notes: 'a' }, at: T0 })).result();
      const second = given(created, ...first).when(change({ terms: { notes: 'b' }, at: T0 })).result();
      const etags = [[created], [created, ...first], [created, ...first, ...second]].map((events) => quoteETag(fold(quoteDecider, events)!));
      expect(new Set(etags).size).toBe(3);
    });

    it('given an ETag read before a send, then it no longer matches after the send', () => {
      given(created, sent).when(send({ ifMatch: [etag] })).thenThrows(PreconditionFailed);
    });
  });

  describe('replaceLineItems (PUT line-items)', () => {
    it('given a draft, then the breakdown is replaced directly with recomputed totals', () => {
      given(created)
        .when(replace())
        .then({
          type: 'quote.v2.lineItemsReplaced',
          data: {
            organizationId: ORG,
            quoteId: QUOTE,
            version: 1,
            lineItems: replacedLines.map((l) => ({ ...l })),
            totals: { subtotal: 99.99, taxAmount: 21, total: 120.99 },
            previousTotals: { subtotal: 251, taxAmount: 52.71, total: 303.71 },
            changeDescription: 'Line items replaced',
            at: AT,
          },
        });
    });

    it('given a draft, when its line items are replaced by equal ones, then nothing happens (as with equal terms); a sent quote with revise still gets its new version', () => {
      const [replaced] = given(created).when(replace()).result();
      given(created, replaced).when(replace({ changeDescription: 'the same again' })).then();
      expect(given(created, sent).when(replace({ revise: true })).result()).toHaveLength(1);
    });

    it('given a sent quote without revise, then revision_required', () => {
      given(created, sent).when(replace()).thenThrows(RevisionRequired);
    });

    it('given a viewed quote with revise, then version 2 is a draft with the new breakdown', () => {
      given(created, sent, viewed)
        .when(replace({ revise: true, changeDescription: 'Triple glazing instead' }))
        .then({
          type: 'quote.v1.revised',
          data: {
            organizationId: ORG,
            quoteId: QUOTE,
            fromVersion: 1,
            version: 2,
            changeDescription: 'Triple glazing instead',
            changes: {},
            lineItems: replacedLines.map((l) => ({ ...l })),
            totals: { subtotal: 99.99, taxAmount: 21, total: 120.99 },
            validUntil: T0 + HOUR + 30 * DAY_MS,
            at: AT,
          },
        });
    });

    it('given an accepted quote, then quote_not_editable', () => {
      given(created, sent, accepted).when(replace({ revise: true })).thenThrows(QuoteNotEditable);
    });

    it('given a revised draft, when it is revised again with revise: true, then the change applies directly to the draft', () => {
      const revised = given(created, sent).when(replace({ revise: true })).result();
      const [event] = given(created, sent, ...revised)
        .when(replace({ revise: true, lineItems: [line({ description: 'Quadruple glazing', quantity: 1, unitPrice: 120, itemType: 'material' })] }))
        .result();
      expect(event.type).toBe('quote.v2.lineItemsReplaced');
      expect(event.type === 'quote.v2.lineItemsReplaced' && event.data.version).toBe(2);
    });
  });

  describe('the largest amount a JSON number holds exactly (10^15 minor units)', () => {
    /** A draft of `lines` in `currency` at `taxRate`, created. */
    const quoteOf = (lines: QuoteLineInput[], terms: Partial<QuoteDraft['terms']> = {}) =>
      given().when({ type: 'createQuote', quoteNumber: NUMBER, ...draft, terms: { ...draft.terms, taxRate: 0, ...terms }, lineItems: lines }).result();
    const totalsOf = (events: QuoteEvent[]) => (events[0].data as { totals: unknown }).totals;
    const refusedAt = (path: string, currency: string) =>
      expect.objectContaining({ code: 'validation_error', fields: [{ path, message: expect.stringContaining(`largest amount the service handles in ${currency}`) }] });
    /** 9 999 999 999 900 + 100 = exactly 10 000 000 000 000.00 EUR */
    const atTheLimit = [line({ quantity: 10_000, unitPrice: 999_999_999.99 }), line({ quantity: 1, unitPrice: 100 })];
    const oneCentPast = [line({ quantity: 10_000, unitPrice: 999_999_999.99 }), line({ quantity: 1, unitPrice: 100.01 })];

    it('given lines adding up to exactly the largest amount, then the quote is created with exact totals', () => {
      expect(totalsOf(quoteOf(atTheLimit))).toEqual({ subtotal: 10_000_000_000_000, taxAmount: 0, total: 10_000_000_000_000 });
      expect(totalsOf(quoteOf([line({ quantity: 1_000_000, unitPrice: 1_000_000_000 })], { currency: 'JPY' }))).toMatchObject({ total: 1e15 });
    });

    it('given lines one minor unit past it, or tax that takes the total past it, then createQuote is refused: at lineItems when the request supplied them, else at the request', () => {
      const supplied = (lines: QuoteLineInput[], terms: Partial<QuoteDraft['terms']> = {}) =>
        given().when({ type: 'createQuote', quoteNumber: NUMBER, ...draft, pricingSource: 'supplied', terms: { ...draft.terms, taxRate: 0, ...terms }, lineItems: lines }).result();
      expect(() => supplied(oneCentPast)).toThrow(refusedAt('lineItems', 'EUR'));
      expect(() => supplied(atTheLimit, { taxRate: 0.0001 })).toThrow(refusedAt('lineItems', 'EUR'));
      expect(() => supplied([line({ quantity: 1_000_000, unitPrice: 1_000_000_000 }), line({ quantity: 1, unitPrice: 1 })], { currency: 'JPY' })).toThrow(refusedAt('lineItems', 'JPY'));
      // The submission's own lines: what takes them past it is the tax, which the request may not have named.
      expect(() => quoteOf(atTheLimit, { taxRate: 0.0001 })).toThrow(refusedAt('', 'EUR'));
    });

    it('given 200 lines at the line-item bounds (1e6 × 1e9), then createQuote is refused instead of summing them inexactly', () => {
      expect(() => quoteOf(Array.from({ length: 200 }, () => line({ quantity: 1_000_000, unitPrice: 1_000_000_000 })))).toThrow(AmountTooLarge);
    });

    it('given a draft or a sent quote, when the new line items are past it, then the replacement is refused at lineItems (with or without revise)', () => {
      const untaxed = quoteOf([line()]);
      expect(given(...untaxed).when(replace({ lineItems: atTheLimit })).result()).toMatchObject([{ data: { totals: { subtotal: 1e13, taxAmount: 0, total: 1e13 } } }]);
      expect(() => given(...untaxed).when(replace({ lineItems: oneCentPast })).result()).toThrow(refusedAt('lineItems', 'EUR'));
      expect(() => given(...untaxed, sent).when(replace({ lineItems: oneCentPast, revise: true })).result()).toThrow(refusedAt('lineItems', 'EUR'));
      // at 21% the tax on lines at the limit takes the total past it
      expect(() => given(created).when(replace({ lineItems: atTheLimit })).result()).toThrow(refusedAt('lineItems', 'EUR'));
    });

    it('given a quote, when its currency changes to one whose largest amount it exceeds, then the change is refused at currency', () => {
      const history = quoteOf([line({ quantity: 5_000, unitPrice: 1_000_000_000 })]);
      expect(() => given(...history).when(change({ terms: { currency: 'KWD' } })).result()).toThrow(refusedAt('currency', 'KWD'));
      expect(() => given(...history, sent).when(change({ terms: { currency: 'KWD', notes: 'in dinar' }, revise: true })).result()).toThrow(refusedAt('currency', 'KWD'));
      expect(given(...history).when(change({ terms: { currency: 'JPY' } })).result()).toMatchObject([{ data: { totals: { subtotal: 5e12, total: 5e12 } } }]);
    });

    it('given a quote, when a tax rate takes its total past the largest amount, then the change is refused at taxRate', () => {
      const history = quoteOf([line({ quantity: 9_000, unitPrice: 1_000_000_000 })]);
      expect(given(...history).when(change({ terms: { taxRate: 11.1111 } })).result()).toMatchObject([{ data: { totals: { subtotal: 9e12, taxAmount: 999_999_000_000, total: 9_999_999_000_000 } } }]);
      expect(() => given(...history).when(change({ terms: { taxRate: 11.1112 } })).result()).toThrow(refusedAt('taxRate', 'EUR'));
    });
  });

  describe('sendQuote', () => {
    it('given a draft, then it is sent with a new customer link, sentAt and validUntil = sentAt + validityDays', () => {
      given(created).when(send({ at: T0 + HOUR })).then(sent);
    });

    it('given a sent quote, then it is re-sent with the same link (the new one is ignored)', () => {
      given(created, sent).when(send({ newLink: OTHER_LINK, at: AT })).then(sentEvent(AT, true));
    });

    it('given a revised draft, then version 2 is sent with the link of the first send', () => {
      const revised = given(created, sent).when(change({ terms: { notes: 'v2' }, revise: true })).result();
      const [event] = given(created, sent, ...revised).when(send({ newLink: OTHER_LINK, at: AT + HOUR })).result();
      expect(event).toMatchObject({ type: 'quote.v1.sent', data: { quote: { version: 2, status: 'sent' }, tokenHash: LINK.tokenHash, customerUrl: LINK.customerUrl, resend: false } });
    });

    it('given an explicit locale, then it overrides the customer locale', () => {
      const [event] = given(created).when(send({ locale: 'de' })).result();
      expect(event.type === 'quote.v1.sent' && event.data.locale).toBe('de');
    });

    it('given a send of a keyed request, when that request is retried, then nothing is sent again, whatever happened since; another request sends', () => {
      const [keyed] = given(created).when(send({ request: 'send_1', at: T0 + HOUR })).result();
      expect(keyed).toMatchObject({ type: 'quote.v1.sent', data: { request: 'send_1' } });
      given(created, keyed).when(send({ request: 'send_1', at: AT })).then();
      given(created, keyed, viewed).when(send({ request: 'send_1', ifMatch: ['"1-0"'], at: AT })).then();
      const [other] = given(created, keyed).when(send({ request: 'send_2', at: AT })).result();
      expect(other).toMatchObject({ type: 'quote.v1.sent', data: { request: 'send_2', resend: true } });
      expect(given(created, keyed).when(send({ at: AT })).result()).toHaveLength(1);
      // The same request a day after the send is a new one: it sends.
      expect(given(created, keyed).when(send({ request: 'send_1', at: T0 + HOUR + REQUEST_RETRY_WINDOW_MS })).result()).toHaveLength(1);
    });

    it.each([
      ['viewed', [sent, viewed]],
      ['accepted', [sent, accepted]],
      ['rejected', [sent, rejected]],
      ['expired', [sent, expired]],
    ] as Array<[string, QuoteEvent[]]>)('given a quote that is %s, then quote_not_sendable', (_status, history) => {
      given(created, ...history).when(send()).thenThrows(QuoteNotSendable);
    });
  });

  describe('customer actions (storefront)', () => {
    it('given a sent quote, when the customer opens it, then it is viewed', () => {
      given(created, sent).when({ type: 'viewQuote', tokenHash: LINK.tokenHash, at: T0 + 2 * HOUR }).then(viewed);
    });

    it('given a sent quote past validUntil (the expiry check not yet round), when the customer opens it, then nothing is recorded', () => {
      const validUntil = T0 + HOUR + 30 * DAY_MS;
      given(created, sent).when({ type: 'viewQuote', tokenHash: LINK.tokenHash, at: validUntil }).then();
      given(created, sent).when({ type: 'viewQuote', tokenHash: LINK.tokenHash, at: validUntil - 1 }).then({ ...viewed, data: { ...viewed.data, at: validUntil - 1 } });
    });

    it('given a viewed quote, when the customer opens it again, then nothing happens', () => {
      given(created, sent, viewed).when({ type: 'viewQuote', tokenHash: LINK.tokenHash, at: AT }).then();
    });

    it('given another token, then not_found', () => {
      given(created, sent).when({ type: 'viewQuote', tokenHash: 'other', at: AT }).thenThrows(QuoteNotFound);
      given(created).when({ type: 'viewQuote', tokenHash: LINK.tokenHash, at: AT }).thenThrows(QuoteNotFound);
    });

    it.each([
      ['sent', [sent]],
      ['viewed', [sent, viewed]],
    ] as Array<[string, QuoteEvent[]]>)('given a %s quote, then the customer can accept or reject it', (_status, history) => {
      given(created, ...history).when({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', at: T0 + 3 * HOUR }).then(accepted);
      given(created, ...history).when({ type: 'rejectQuote', tokenHash: LINK.tokenHash, name: null, reason: 'Too expensive', at: T0 + 3 * HOUR }).then(rejected);
    });

    it.each([
      ['accepted', [sent, accepted]],
      ['rejected', [sent, rejected]],
      ['expired', [sent, expired]],
    ] as Array<[string, QuoteEvent[]]>)('given a quote that is %s, then accept and reject are quote_not_actionable', (_status, history) => {
      given(created, ...history).when({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: null, at: AT }).thenThrows(QuoteNotActionable);
      given(created, ...history).when({ type: 'rejectQuote', tokenHash: LINK.tokenHash, name: null, reason: null, at: AT }).thenThrows(QuoteNotActionable);
    });

    it('given an answer of a keyed request, when that request is retried, then it answers as the first did; any other answer is quote_not_actionable', () => {
      const accept = (request: string | undefined, at = AT): QuoteCommand => ({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', version: 1, at, request });
      const reject = (request: string | undefined): QuoteCommand => ({ type: 'rejectQuote', tokenHash: LINK.tokenHash, name: null, reason: null, at: AT, request });
      const [keyed] = given(created, sent).when(accept('answer_1')).result();
      expect(keyed).toMatchObject({ type: 'quote.v1.accepted', data: { request: 'answer_1' } });
      given(created, sent, keyed).when(accept('answer_1', AT + HOUR)).then();
      given(created, sent, keyed).when(accept('answer_2')).thenThrows(QuoteNotActionable);
      given(created, sent, keyed).when(accept(undefined)).thenThrows(QuoteNotActionable);
      // A rejection under the key of the acceptance cannot happen (the key's scope is the route), and would not pass.
      given(created, sent, keyed).when(reject('answer_2')).thenThrows(QuoteNotActionable);
      // The same request a day after the answer is a new one: refused like any other.
      given(created, sent, keyed).when(accept('answer_1', AT + REQUEST_RETRY_WINDOW_MS)).thenThrows(QuoteNotActionable);
      // A rejection works the same way; an answer without a key records none.
      const [rejectedKeyed] = given(created, sent).when(reject('answer_3')).result();
      given(created, sent, rejectedKeyed).when(reject('answer_3')).then();
      const [plain] = given(created, sent).when(accept(undefined)).result();
      expect(plain.data).not.toHaveProperty('request');
    });

    it('given a quote being revised (draft again), then the customer cannot accept the old version', () => {
      const revised = given(created, sent).when(change({ terms: { notes: 'v2' }, revise: true })).result();
      given(created, sent, ...revised).when({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: null, at: AT }).thenThrows(QuoteNotActionable);
    });

    it('given a sent quote past validUntil that the expiry check has not reached yet, then it cannot be accepted', () => {
      given(created, sent).when({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: null, at: T0 + HOUR + 30 * DAY_MS }).thenThrows(QuoteNotActionable);
    });

    it('given version 2 was sent while the customer still had version 1 on screen, then an answer for version 1 is quote_not_actionable; one for version 2, or naming none, applies to version 2', () => {
      const revised = given(created, sent, viewed).when(replace({ revise: true })).result();
      const history = [created, sent, viewed, ...revised, ...given(created, sent, viewed, ...revised).when(send({ at: AT + HOUR })).result()];
      const at = AT + 2 * HOUR;
      const refusal = (command: QuoteCommand) => {
        try {
          given(...history).when(command).result();
        } catch (error) {
          return error;
        }
      };

      for (const stale of [
        { type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', version: 1, at },
        { type: 'rejectQuote', tokenHash: LINK.tokenHash, name: null, reason: null, version: 1, at },
      ] satisfies QuoteCommand[]) {
        const error = refusal(stale);
        expect(error).toBeInstanceOf(QuoteVersionNotCurrent);
        expect(error).toMatchObject({ code: 'quote_not_actionable', details: { status: 'sent', version: 2 } });
        expect((error as Error).message).toMatch(/^Version 1 is no longer the current version of this quote \(version 2 was sent since\)\./);
      }
      // a version the quote never had is not told it was superseded
      expect(refusal({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', version: 3, at })).toMatchObject({
        code: 'quote_not_actionable',
        message: 'This quote has no version 3: its current version is 2. Nothing was changed; reload the quote to answer it.',
      });
      expect(given(...history).when({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: 'Ada', version: 2, at }).result()).toMatchObject([
        { type: 'quote.v1.accepted', data: { quote: { version: 2, status: 'accepted', total: 120.99 } } },
      ]);
      expect(given(...history).when({ type: 'rejectQuote', tokenHash: LINK.tokenHash, name: null, reason: null, version: 2, at }).result()).toMatchObject([
        { type: 'quote.v1.rejected', data: { quote: { version: 2, status: 'rejected' } } },
      ]);
      // The documented body names no version: it answers the current one, as it always did.
      expect(given(...history).when({ type: 'acceptQuote', tokenHash: LINK.tokenHash, name: null, at }).result()).toMatchObject([{ data: { quote: { version: 2 } } }]);
    });
  });

  describe('expiry', () => {
    const validUntil = T0 + HOUR + 30 * DAY_MS;
    const notice = (at: number): QuoteCommand => ({ type: 'noticeExpiringSoon', at });
    const noticed = (at: number, until = validUntil, version = 1): QuoteEvent => ({
      type: 'quote.v1.expiringSoonNoticed',
      data: { organizationId: ORG, quoteId: QUOTE, ...subject('sent', version), validUntil: until, at },
    });

    it('given a sent quote more than 3 days before validUntil, then no notice yet', () => {
      given(created, sent).when(notice(validUntil - 3 * DAY_MS - 1)).then();
    });

    it('given a sent quote 3 days before validUntil, then the expiring-soon notice is recorded once', () => {
      given(created, sent).when(notice(validUntil - 3 * DAY_MS)).then(noticed(validUntil - 3 * DAY_MS));
      given(created, sent, noticed(validUntil - 3 * DAY_MS)).when(notice(validUntil - DAY_MS)).then();
    });

    it('given a re-send that extends the validity, then the new window gets its own notice', () => {
      const resentAt = validUntil - 2 * DAY_MS;
      const resent = sentEvent(resentAt, true);
      const newUntil = resentAt + 30 * DAY_MS;
      given(created, sent, noticed(validUntil - 3 * DAY_MS), resent).when(notice(newUntil - DAY_MS)).then(noticed(newUntil - DAY_MS, newUntil));
    });

    it('given a validity of 3 days or less, then no notice: the quote is expiring soon from its send', () => {
      const shortSend = (days: number): QuoteEvent => ({ ...sent, data: { ...sent.data, validUntil: (sent.data as { sentAt: number }).sentAt + days * DAY_MS } } as QuoteEvent);
      for (const days of [1, 2, 3]) {
        const short = shortSend(days);
        const until = (short.data as { validUntil: number }).validUntil;
        given(created, short).when(notice(until - DAY_MS / 2)).then();
      }
      const four = shortSend(4);
      const until = (four.data as { validUntil: number }).validUntil;
      given(created, four).when(notice(until - DAY_MS)).then(noticed(until - DAY_MS, until));
    });

    it('given a draft, a decided quote or a quote already past validUntil, then no notice', () => {
      given(created).when(notice(T0 + 29 * DAY_MS)).then();
      given(created, sent, accepted).when(notice(validUntil - DAY_MS)).then();
      given(created, sent).when(notice(validUntil)).then();
    });

    it('given a sent or viewed quote at validUntil, then it expires', () => {
      given(created, sent).when({ type: 'expireQuote', at: validUntil }).then(expired);
      const [event] = given(created, sent, viewed).when({ type: 'expireQuote', at: validUntil + 1 }).result();
      expect(event).toMatchObject({ type: 'quote.v1.expired', data: { quote: { status: 'expired' }, validUntil } });
    });

    it('given a quote before validUntil, already expired, accepted or still a draft, then the expiry changes nothing', () => {
      given(created, sent).when({ type: 'expireQuote', at: validUntil - 1 }).then();
      given(created, sent, expired).when({ type: 'expireQuote', at: validUntil + DAY_MS }).then();
      given(created, sent, accepted).when({ type: 'expireQuote', at: validUntil + DAY_MS }).then();
      given(created).when({ type: 'expireQuote', at: T0 + 365 * DAY_MS }).then();
    });

    it('given the expiring-soon notice, then the ETag stays the same (nothing a client sees changed)', () => {
      const before = fold(quoteDecider, [created, sent]);
      const after = fold(quoteDecider, [created, sent, noticed(validUntil - DAY_MS)]);
      expect(quoteETag(after!)).toBe(quoteETag(before!));
    });
  });
});
