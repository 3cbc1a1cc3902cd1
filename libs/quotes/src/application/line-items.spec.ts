import type { SubmissionView } from '@lib/submissions';
import { toQuoteLines } from './line-items';
import { submissionLineItems } from './quote.commands';

const item = (description: string, extra: Record<string, unknown> = {}) => ({ description, quantity: 1, unitPrice: 10, ...extra });

describe('quote line items from input', () => {
  it('given no order fields, then the array order is the line order and a missing itemType is other', () => {
    expect(toQuoteLines([item('b'), item('a', { itemType: 'labor', itemKey: 'k', externalRef: 'crm:1' })])).toEqual([
      { description: 'b', quantity: 1, unitPrice: 10, itemType: 'other', itemKey: null, externalRef: null },
      { description: 'a', quantity: 1, unitPrice: 10, itemType: 'labor', itemKey: 'k', externalRef: 'crm:1' },
    ]);
  });

  it('given every item with an order, then they are sorted by it, ties in array order', () => {
    const lines = toQuoteLines([item('c', { order: 2 }), item('a', { order: 0 }), item('b1', { order: 1 }), item('b2', { order: 1 })]);
    expect(lines.map((l) => l.description)).toEqual(['a', 'b1', 'b2', 'c']);
  });

  it('given base items with sortOffset (and no order), then they are sorted by sortOffset', () => {
    expect(toQuoteLines([item('z', { sortOffset: 20 }), item('y', { sortOffset: 10 })]).map((l) => l.description)).toEqual(['y', 'z']);
  });

  it('given order on only some items, then the array order stands', () => {
    expect(toQuoteLines([item('z', { order: 5 }), item('y')]).map((l) => l.description)).toEqual(['z', 'y']);
  });
});

describe('quote line items from a submission', () => {
  const base = { lineItems: [{ ...item('Base window'), total: 10, itemType: 'window', itemKey: 'component:c1:TT', sortOffset: 0 }], subtotal: 10 };
  const submission = (externalPricing: SubmissionView['externalPricing']) => ({ configHash: 'sha256:current', basePricing: base, externalPricing }) as SubmissionView;
  const external = (configHash: string) => ({ configHash, receivedAt: 1, subtotal: 99, lineItems: [{ ...item('Partner price'), unitPrice: 99, total: 99, itemType: 'other', externalRef: 'erp:1' }] });

  it('given frozen external pricing for the submitted configuration, then it is preferred', () => {
    expect(submissionLineItems(submission(external('sha256:current')))).toEqual({
      pricingSource: 'external',
      lineItems: [{ description: 'Partner price', quantity: 1, unitPrice: 99, itemType: 'other', itemKey: null, externalRef: 'erp:1' }],
    });
  });

  it('given external pricing for another configuration hash, or none, then the base breakdown is used', () => {
    for (const pricing of [external('sha256:older'), null]) {
      expect(submissionLineItems(submission(pricing))).toEqual({
        pricingSource: 'base',
        lineItems: [{ description: 'Base window', quantity: 1, unitPrice: 10, itemType: 'window', itemKey: 'component:c1:TT', externalRef: null }],
      });
    }
  });
});
