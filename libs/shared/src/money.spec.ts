import Decimal from 'decimal.js';
import { AmountTooLarge, checkedAmount, computeTotals, isRepresentableAmount, largestAmount, lineTotal, minorUnits, roundMoney, toMoneyNumber } from './money';

describe('money', () => {
  describe('minorUnits', () => {
    it.each([
      ['EUR', 2], ['usd', 2], ['JPY', 0], ['KRW', 0], ['ISK', 0], ['CLP', 0], ['VND', 0],
      ['BHD', 3], ['KWD', 3], ['OMR', 3], ['JOD', 3], ['TND', 3], ['IQD', 3], ['LYD', 3],
    ])('given %s, then the minor unit has %i decimals', (currency, expected) => {
      expect(minorUnits(currency)).toBe(expected);
    });
  });

  describe('roundMoney', () => {
    it('given 0.1 + 0.2 as decimals, then it is exactly 0.3', () => {
      expect(roundMoney(new Decimal(0.1).plus(0.2), 'EUR').toString()).toBe('0.3');
    });

    it('given amounts ending in exactly half a cent, then they round up (away from zero)', () => {
      expect(roundMoney('0.005', 'EUR').toFixed(2)).toBe('0.01');
      expect(roundMoney(1.005, 'EUR').toFixed(2)).toBe('1.01');
      expect(roundMoney(2.675, 'EUR').toFixed(2)).toBe('2.68');
      expect(roundMoney('-0.125', 'EUR').toFixed(2)).toBe('-0.13');
    });

    it('given just under half a cent, then it rounds down', () => {
      expect(roundMoney('1.00499999', 'EUR').toFixed(2)).toBe('1.00');
    });

    it('given yen, then amounts round to whole yen', () => {
      expect(roundMoney(1234.5, 'JPY').toString()).toBe('1235');
      expect(roundMoney(1234.49, 'JPY').toString()).toBe('1234');
    });

    it('given dinar, then amounts round to the fils (3 decimals)', () => {
      expect(roundMoney('1.2345', 'KWD').toString()).toBe('1.235');
      expect(roundMoney('1.2344', 'KWD').toString()).toBe('1.234');
    });

    it('given a non-finite amount, then it refuses to round it', () => {
      expect(() => roundMoney(Number.NaN, 'EUR')).toThrow(RangeError);
      expect(() => roundMoney(Number.POSITIVE_INFINITY, 'EUR')).toThrow(RangeError);
    });
  });

  describe('toMoneyNumber', () => {
    it('given a rounded amount, then the JSON number prints the same digits', () => {
      expect(JSON.stringify(toMoneyNumber(roundMoney('551.88', 'EUR')))).toBe('551.88');
      expect(Object.is(toMoneyNumber(roundMoney('-0.001', 'EUR')), 0)).toBe(true);
    });
  });

  describe('the largest amount (10^15 minor units)', () => {
    it.each([
      ['EUR', '10000000000000.00', '10000000000000.01'],
      ['JPY', '1000000000000000', '1000000000000001'],
      ['KWD', '1000000000000.000', '1000000000000.001'],
    ])('given %s, then %s is exact and accepted, and one minor unit more is refused', (currency, largest, past) => {
      expect(largestAmount(currency).toFixed(minorUnits(currency))).toBe(largest);
      expect(isRepresentableAmount(largest, currency)).toBe(true);
      expect(isRepresentableAmount(`-${largest}`, currency)).toBe(true);
      expect(isRepresentableAmount(past, currency)).toBe(false);
      expect(isRepresentableAmount(`-${past}`, currency)).toBe(false);
      expect(new Decimal(JSON.stringify(checkedAmount(new Decimal(largest), currency, 'lineItems'))).equals(largest)).toBe(true);
      expect(() => checkedAmount(new Decimal(past), currency, 'lineItems')).toThrow(AmountTooLarge);
    });

    it('given an amount just below it, then its JSON number prints every digit', () => {
      expect(JSON.stringify(checkedAmount(new Decimal('9999999999999.99'), 'EUR', 'lineItems'))).toBe('9999999999999.99');
      expect(JSON.stringify(checkedAmount(new Decimal('999999999999.999'), 'KWD', 'lineItems'))).toBe('999999999999.999');
    });

    it('given an amount past it, then the refusal is a 422 validation_error naming the field and the largest amount', () => {
      const refusal = (() => {
        try {
          checkedAmount(new Decimal('99899999999001099.90'), 'EUR', 'unitAmount');
        } catch (error) {
          return error as AmountTooLarge;
        }
        throw new Error('not refused');
      })();
      expect(refusal.code).toBe('validation_error');
      expect(refusal.message).toBe('The price exceeds the largest amount the service handles in EUR (10000000000000.00). Nothing was changed.');
      expect(refusal.details).toEqual({ fields: [{ path: 'unitAmount', message: 'the price exceeds the largest amount the service handles in EUR (10000000000000.00)' }] });
      expect(refusal.under('configuration').details).toEqual({ fields: [{ path: 'configuration.unitAmount', message: refusal.fields[0].message }] });
      expect(new AmountTooLarge('JPY', '').under('configuration').fields[0]).toEqual({ path: 'configuration', message: 'the price exceeds the largest amount the service handles in JPY (1000000000000000)' });
    });
  });

  describe('lineTotal', () => {
    it('given 3 × 0.1, then the line total is 0.3 (not 0.30000000000000004)', () => {
      expect(toMoneyNumber(lineTotal(3, 0.1, 'EUR'))).toBe(0.3);
    });

    it('given a fractional quantity, then the product is rounded half-up once', () => {
      expect(toMoneyNumber(lineTotal(1.5, 3.33, 'EUR'))).toBe(5); // 4.995 → 5.00
      expect(toMoneyNumber(lineTotal(2.5, 0.333, 'KWD'))).toBe(0.833); // 0.8325 → 0.833
      expect(toMoneyNumber(lineTotal(3, 333.5, 'JPY'))).toBe(1001); // 1000.5 → 1001
    });
  });

  describe('computeTotals', () => {
    it('given lines of 0.1 and 0.2 at 10% tax, then subtotal 0.3, tax 0.03, total 0.33', () => {
      const totals = computeTotals([{ quantity: 1, unitPrice: 0.1 }, { quantity: 1, unitPrice: 0.2 }], 10, 'EUR');
      expect(totals).toEqual({ subtotal: 0.3, taxAmount: 0.03, total: 0.33 });
    });

    it('given lines whose unrounded sum differs, then each line is rounded before summing', () => {
      // 1 × 0.005 = 0.01 twice → 0.02 (summing first would give 0.01)
      const totals = computeTotals([{ quantity: 1, unitPrice: 0.005 }, { quantity: 1, unitPrice: 0.005 }], 0, 'EUR');
      expect(totals).toEqual({ subtotal: 0.02, taxAmount: 0, total: 0.02 });
    });

    it('given 21% VAT on 10.50, then the tax of 2.205 rounds up to 2.21', () => {
      expect(computeTotals([{ quantity: 3, unitPrice: 3.5 }], 21, 'EUR')).toEqual({ subtotal: 10.5, taxAmount: 2.21, total: 12.71 });
    });

    it('given yen at 10% tax, then every amount is in whole yen', () => {
      expect(computeTotals([{ quantity: 2, unitPrice: 1234 }, { quantity: 1, unitPrice: 99.5 }], 10, 'JPY'))
        .toEqual({ subtotal: 2568, taxAmount: 257, total: 2825 });
    });

    it('given dinar at 5% tax, then amounts keep three decimals', () => {
      expect(computeTotals([{ quantity: 1, unitPrice: 12.345 }], 5, 'KWD')).toEqual({ subtotal: 12.345, taxAmount: 0.617, total: 12.962 });
    });

    it('given lines that add up to exactly the largest amount, then every total is exact', () => {
      const lines = [{ quantity: 10_000, unitPrice: 999_999_999.99 }, { quantity: 1, unitPrice: 100 }];
      expect(computeTotals(lines, 0, 'EUR')).toEqual({ subtotal: 10_000_000_000_000, taxAmount: 0, total: 10_000_000_000_000 });
    });

    it('given lines one cent past the largest amount, then they are refused at the field named', () => {
      const lines = [{ quantity: 10_000, unitPrice: 999_999_999.99 }, { quantity: 1, unitPrice: 100.01 }];
      expect(() => computeTotals(lines, 0, 'EUR', 'lineItems')).toThrow(expect.objectContaining({ fields: [expect.objectContaining({ path: 'lineItems' })] }));
    });

    it('given a subtotal that fits but tax that takes the total past the largest amount, then it is refused', () => {
      const lines = [{ quantity: 1_000_000, unitPrice: 9_000_000 }];
      expect(computeTotals(lines, 11.1111, 'EUR').total).toBe(9_999_999_000_000);
      expect(() => computeTotals(lines, 11.1112, 'EUR', 'taxRate')).toThrow(expect.objectContaining({ fields: [expect.objectContaining({ path: 'taxRate' })] }));
    });

    it('given 200 lines of 1e6 × 1e9 (the line-item bounds), then they are refused rather than summed inexactly', () => {
      const lines = Array.from({ length: 200 }, () => ({ quantity: 1_000_000, unitPrice: 1_000_000_000 }));
      expect(() => computeTotals(lines, 21, 'JPY')).toThrow(AmountTooLarge);
    });

    it('given no lines, then everything is zero', () => {
      expect(computeTotals([], 21, 'EUR')).toEqual({ subtotal: 0, taxAmount: 0, total: 0 });
    });
  });
});
