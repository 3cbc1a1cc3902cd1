import { ValidationFailed } from '@lib/shared';
import { priceExternalLineItems } from '@lib/submissions';
import { parseAdjustmentsBody } from './adjustment.dto';

const HASH = `sha256:${'c'.repeat(64)}`;
const item = { description: 'Window', quantity: 1, unitPrice: 100 };

/** The field paths a body is refused with; none when it is accepted. */
async function refusedPaths(body: unknown): Promise<string[]> {
  try {
    await parseAdjustmentsBody(body);
    return [];
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    return [...new Set(error.fields.map((f) => f.path))].sort();
  }
}

describe('PUT adjustments body', () => {
  it.each([
    ['an object', {}, 'lineItems must be an array'],
    ['null', null, 'lineItems must be an array'],
    ['a string', 'x', 'lineItems must be an array'],
    ['nothing', undefined, 'lineItems is required'],
  ])('tells a breakdown that is %s one thing about it', async (_, lineItems, message) => {
    const refused = await parseAdjustmentsBody({ configHash: HASH, lineItems }).catch((error: ValidationFailed) => error.fields);
    expect(refused).toEqual([{ path: 'lineItems', message }]);
  });

  it('tells a line of the wrong kind what kind, and a missing amount that it is required', async () => {
    const refused = await parseAdjustmentsBody({ configHash: HASH, lineItems: [{ description: 'a', quantity: 1, unitPrice: '12.50' }, { description: 'b', unitPrice: 1 }] }).catch(
      (error: ValidationFailed) => error.fields,
    );
    expect(refused).toEqual([
      { path: 'lineItems[0].unitPrice', message: 'unitPrice must be a finite number' },
      { path: 'lineItems[1].quantity', message: 'quantity is required' },
    ]);
  });

  it('keeps an externalRef verbatim, and takes "" as none, like null (one externalRef rule, docs/decisions/quotes.md)', async () => {
    const { lineItems } = await parseAdjustmentsBody({
      configHash: HASH,
      lineItems: [' a:b ', '<b>x</b>', '', null].map((externalRef) => ({ ...item, externalRef })),
    });
    expect(lineItems.map((i) => i.externalRef)).toEqual([' a:b ', '<b>x</b>', undefined, undefined]);
  });

  describe('amounts a partner computed in binary floating point', () => {
    it('takes them and keeps 6 decimals, so a 10 % markup on 551.88 is priced 607.07', async () => {
      const unitPrice = 551.88 * 1.1;
      expect(unitPrice).toBe(607.0680000000001);
      const quantity = 0.1 + 0.2;

      const { lineItems } = await parseAdjustmentsBody({ configHash: HASH, lineItems: [{ ...item, unitPrice }, { ...item, quantity, unitPrice: 10 }] });

      expect(lineItems.map((i) => [i.quantity, i.unitPrice])).toEqual([[1, 607.068], [0.3, 10]]);
      expect(priceExternalLineItems(lineItems, 'EUR')).toMatchObject({ lineItems: [{ unitPrice: 607.068, total: 607.07 }, { quantity: 0.3, total: 3 }], subtotal: 610.07 });
    });

    it('rounds half-up in decimal and keeps a price in fractions of a cent', async () => {
      const { lineItems } = await parseAdjustmentsBody({
        configHash: HASH,
        lineItems: [{ ...item, unitPrice: 0.0000005 }, { ...item, unitPrice: 0.125 }, { ...item, quantity: 2.0000004999, unitPrice: 1.23456749 }],
      });
      expect(lineItems.map((i) => [i.quantity, i.unitPrice])).toEqual([[1, 0.000001], [1, 0.125], [2, 1.234567]]);
    });
  });

  describe('what stays a 422 with the field path', () => {
    it.each([
      ['a string', '12'],
      ['null', null],
      ['NaN', NaN],
      ['Infinity', Infinity],
      ['a boolean', true],
    ])('%s as quantity or unitPrice', async (_name, value) => {
      expect(await refusedPaths({ configHash: HASH, lineItems: [{ ...item, quantity: value }, { ...item, unitPrice: value }] })).toEqual(['lineItems[0].quantity', 'lineItems[1].unitPrice']);
    });

    it('a negative price, a quantity not above 0 (also once rounded), amounts over the limits', async () => {
      const lineItems = [
        { ...item, unitPrice: -0.01 },
        { ...item, unitPrice: -1e-9 },
        { ...item, quantity: 0 },
        { ...item, quantity: -2 },
        { ...item, quantity: 1e-7 },
        { ...item, quantity: 1_000_001 },
        { ...item, unitPrice: 1_000_000_001 },
      ];
      expect(await refusedPaths({ configHash: HASH, lineItems })).toEqual([
        'lineItems[0].unitPrice', 'lineItems[1].unitPrice', 'lineItems[2].quantity', 'lineItems[3].quantity', 'lineItems[4].quantity', 'lineItems[5].quantity', 'lineItems[6].unitPrice',
      ]);
    });
  });

  describe('the basePricing object sent back with its configHash', () => {
    const basePricing = {
      lineItems: [{ description: 'Window', quantity: 2, unitPrice: 400, total: 800, itemType: 'window', itemKey: 'component:c1:TT' }],
      subtotal: 800,
    };

    it('is accepted; its subtotal is ignored, as the server computes it', async () => {
      const body = await parseAdjustmentsBody({ configHash: HASH, ...basePricing, subtotal: 1 });
      expect(body).toEqual({ configHash: HASH, lineItems: [{ description: 'Window', quantity: 2, unitPrice: 400, itemType: 'window', itemKey: 'component:c1:TT' }] });
      expect(await refusedPaths({ configHash: HASH, ...basePricing })).toEqual([]);
    });

    it('takes a subtotal only as the number its schema says, though it ignores it', async () => {
      expect(await refusedPaths({ configHash: HASH, ...basePricing, subtotal: 'abc' })).toEqual(['subtotal']);
      expect(await refusedPaths({ configHash: HASH, ...basePricing, subtotal: null })).toEqual(['subtotal']);
    });

    it('opens the body to nothing else: other top-level fields are still refused', async () => {
      expect(await refusedPaths({ configHash: HASH, ...basePricing, total: 800, comment: 'hi' })).toEqual(['comment', 'total']);
    });
  });
});
