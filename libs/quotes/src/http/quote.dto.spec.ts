import { createValidationPipe } from '@lib/http';
import { ValidationFailed } from '@lib/shared';
import { toQuoteLines } from '../application/line-items';
import { CreateQuoteDto, CustomerResponseDto, ReplaceLineItemsDto, requestedMailLanguage, SendQuoteDto, UpdateQuoteDto } from './quote.dto';

const pipe = createValidationPipe();

/** The body as the global pipe validates it: the DTO, or the field paths it is refused with. */
async function parse<T>(metatype: new () => T, body: unknown): Promise<T> {
  return pipe.transform(body, { type: 'body', metatype }) as Promise<T>;
}

async function refusedPaths(metatype: new () => unknown, body: unknown): Promise<string[]> {
  try {
    await parse(metatype, body);
    return [];
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    return [...new Set(error.fields.map((f) => f.path))].sort();
  }
}

const item = { description: 'Window', quantity: 1, unitPrice: 100 };

describe('quote line items in a request body (POST quotes, PUT line-items)', () => {
  describe("a quote's lines as GET /quotes/{id}, its versions and the quote.created webhook show them", () => {
    const read = [
      { description: 'Window', quantity: 2, unitPrice: 400, total: 800, itemType: 'window', order: 0, itemKey: 'component:c1:TT', externalRef: null },
      { description: 'Fitting', quantity: 1, unitPrice: 50, total: 50, itemType: 'other', order: 1, itemKey: null, externalRef: 'erp:7' },
    ];

    it('are taken back unchanged and give the same lines', async () => {
      for (const metatype of [ReplaceLineItemsDto, CreateQuoteDto]) {
        const dto = await parse(metatype, { lineItems: read });
        expect(toQuoteLines(dto.lineItems!)).toEqual([
          { description: 'Window', quantity: 2, unitPrice: 400, itemType: 'window', itemKey: 'component:c1:TT', externalRef: null },
          { description: 'Fitting', quantity: 1, unitPrice: 50, itemType: 'other', itemKey: null, externalRef: 'erp:7' },
        ]);
      }
    });

    it('null for any optional field means absent: itemType other, no key or reference, array order', async () => {
      const dto = await parse(ReplaceLineItemsDto, {
        lineItems: [
          { ...item, description: 'b', itemType: null, itemKey: null, externalRef: null, order: null, sortOffset: null },
          { ...item, description: 'a', order: null, sortOffset: 0 },
        ],
      });
      expect(toQuoteLines(dto.lineItems)).toEqual([
        { ...item, description: 'b', itemType: 'other', itemKey: null, externalRef: null },
        { ...item, description: 'a', itemType: 'other', itemKey: null, externalRef: null },
      ]);
    });

    it('a present value must still be valid', async () => {
      const lineItems = [
        { ...item, itemType: 'roof' },
        { ...item, itemKey: 7 },
        { ...item, externalRef: 'x'.repeat(201) },
        { ...item, order: '1' },
        { ...item, description: null },
      ];
      expect(await refusedPaths(ReplaceLineItemsDto, { lineItems })).toEqual([
        'lineItems[0].itemType', 'lineItems[1].itemKey', 'lineItems[2].externalRef', 'lineItems[3].order', 'lineItems[4].description',
      ]);
    });
  });

  describe('amounts computed in binary floating point', () => {
    it('are rounded half-up to 6 decimals, as on PUT adjustments: a 10 % markup on 551.88 is 607.068', async () => {
      const unitPrice = 551.88 * 1.1;
      const quantity = 0.1 + 0.2;
      expect([unitPrice, quantity]).toEqual([607.0680000000001, 0.30000000000000004]);
      for (const metatype of [ReplaceLineItemsDto, CreateQuoteDto]) {
        const dto = await parse(metatype, { lineItems: [{ ...item, unitPrice }, { ...item, quantity, unitPrice: 10 }, { ...item, quantity: 2.0000004999, unitPrice: 0.0000005 }] });
        expect(dto.lineItems!.map((l) => [l.quantity, l.unitPrice])).toEqual([[1, 607.068], [0.3, 10], [2, 0.000001]]);
      }
    });

    it('a price in fractions of a cent is kept', async () => {
      const dto = await parse(ReplaceLineItemsDto, { lineItems: [{ ...item, quantity: 1000, unitPrice: 0.125 }] });
      expect(dto.lineItems[0]).toMatchObject({ quantity: 1000, unitPrice: 0.125 });
    });

    it.each([
      ['a string', '12'],
      ['null', null],
      ['NaN', NaN],
      ['Infinity', Infinity],
    ])('%s as quantity or unitPrice is still refused', async (_name, value) => {
      expect(await refusedPaths(ReplaceLineItemsDto, { lineItems: [{ ...item, quantity: value }, { ...item, unitPrice: value }] })).toEqual(['lineItems[0].quantity', 'lineItems[1].unitPrice']);
    });

    it('a negative amount (also -1e-9), a quantity that is 0 once rounded, amounts over the limits are still refused', async () => {
      const lineItems = [
        { ...item, unitPrice: -1e-9 },
        { ...item, quantity: 1e-7 },
        { ...item, quantity: 5e-324 },
        { ...item, quantity: 1_000_000.0000006 },
        { ...item, unitPrice: 1_000_000_000.000001 },
      ];
      expect(await refusedPaths(ReplaceLineItemsDto, { lineItems })).toEqual([
        'lineItems[0].unitPrice', 'lineItems[1].quantity', 'lineItems[2].quantity', 'lineItems[3].quantity', 'lineItems[4].unitPrice',
      ]);
    });
  });
});

describe('taxRate (POST quotes, PATCH quote)', () => {
  it('is rounded half-up to 4 decimals: 0.07 × 100 is 7', async () => {
    expect(0.07 * 100).toBe(7.000000000000001);
    for (const metatype of [CreateQuoteDto, UpdateQuoteDto]) {
      expect((await parse(metatype, { taxRate: 0.07 * 100 })).taxRate).toBe(7);
      expect((await parse(metatype, { taxRate: 7.68745 })).taxRate).toBe(7.6875);
    }
  });

  it.each([
    ['null', null],
    ['a string', '7'],
    ['Infinity', Infinity],
    ['a negative rate (also -1e-9)', -1e-9],
    ['a rate over 100 once rounded', 100.00005],
  ])('%s is still refused', async (_name, taxRate) => {
    for (const metatype of [CreateQuoteDto, UpdateQuoteDto]) expect(await refusedPaths(metatype, { taxRate })).toEqual(['taxRate']);
  });
});

describe('send locale', () => {
  const recipients = ['ada@example.com'];

  it.each([
    ['de', 'de'],
    ['de-DE', 'de'],
    ['DE', 'de'],
    ['nl-BE', 'nl'],
    ['NL', 'nl'],
    ['nl_NL', 'nl'],
    ['en-GB', 'en'],
    ['fr', null],
    ['fr-CH', null],
    ['deu', null],
    ['zh-Hant-TW', null],
  ])('maps the language tag %s to the mail language %s (null: not ours, the customer locale applies)', async (locale, language) => {
    const dto = await parse(SendQuoteDto, { recipients, locale });
    expect(requestedMailLanguage(dto.locale)).toBe(language);
  });

  it('takes null and no locale as "the customer locale"', async () => {
    for (const body of [{ recipients, locale: null }, { recipients }]) expect(requestedMailLanguage((await parse(SendQuoteDto, body)).locale)).toBeNull();
  });

  it.each([
    ['an empty string', ''],
    ['a tag over 35 characters', `de-${'a'.repeat(8)}-${'b'.repeat(8)}-${'c'.repeat(8)}-${'d'.repeat(8)}`],
    ['a subtag over 8 characters', 'de-abcdefghi'],
    ['spaces', 'de DE'],
    ['markup', '<b>de</b>'],
    ['a leading digit', '1de'],
    ['a number', 7],
  ])('refuses %s with the path locale', async (_name, locale) => {
    expect(await refusedPaths(SendQuoteDto, { recipients, locale })).toEqual(['locale']);
  });
});

describe('send recipients', () => {
  async function refusals(body: unknown) {
    try {
      await parse(SendQuoteDto, body);
    } catch (error) {
      if (error instanceof ValidationFailed) return error.fields;
    }
    throw new Error('not refused');
  }

  it('tells each failing recipient at its index, with the first rule it breaks', async () => {
    const long = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`;
    expect(await refusals({ recipients: ['ada@example.com', 'not-an-email', 7, ' bob@example.com ', long, null] })).toEqual([
      { path: 'recipients[1]', message: 'recipients[1] must be a valid e-mail address' },
      { path: 'recipients[2]', message: 'recipients[2] must be a string' },
      { path: 'recipients[4]', message: 'recipients[4] must be at most 254 characters' },
      { path: 'recipients[5]', message: 'recipients[5] must be a string' },
    ]);
  });

  it('tells a list that is no array, empty or too long at the path recipients', async () => {
    expect(await refusals({ recipients: 'ada@example.com' })).toEqual([{ path: 'recipients', message: 'recipients must be an array' }]);
    expect(await refusals({ recipients: [] })).toEqual([{ path: 'recipients', message: 'recipients must contain at least 1 elements' }]);
    expect((await refusals({ recipients: Array.from({ length: 21 }, (_, i) => (i === 3 ? 'x' : `r${i}@example.com`)) })).map((field) => field.path).sort()).toEqual(['recipients', 'recipients[3]']);
  });

  it('takes valid recipients, trimmed', async () => {
    expect((await parse(SendQuoteDto, { recipients: [' ada@example.com', 'bob@example.com'] })).recipients).toEqual(['ada@example.com', 'bob@example.com']);
  });
});

describe('a customer answer\'s version', () => {
  it('takes a whole number from 1 to the largest safe integer, and refuses one a number cannot hold exactly', async () => {
    expect((await parse(CustomerResponseDto, { version: Number.MAX_SAFE_INTEGER })).version).toBe(Number.MAX_SAFE_INTEGER);
    for (const version of [0, 1.5, Number.MAX_SAFE_INTEGER + 2]) expect(await refusedPaths(CustomerResponseDto, { version })).toEqual(['version']);
  });
});
