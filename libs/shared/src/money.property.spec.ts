import Decimal from 'decimal.js';
import fc from 'fast-check';
import { AmountTooLarge, checkedAmount, computeTotals, lineTotal, MAX_AMOUNT_MINOR_UNITS, minorUnits, roundMoney } from './money';

/** Amounts as the API carries them: JSON numbers with at most `places` decimals. */
const amount = (places: number, max = 1_000_000) =>
  fc.integer({ min: -max * 10 ** places, max: max * 10 ** places }).map((units) => units / 10 ** places);
const currency = fc.constantFrom('EUR', 'USD', 'JPY', 'KWD', 'CHF');
const line = fc.record({ quantity: fc.integer({ min: 0, max: 10_000 }).map((q) => q / 100), unitPrice: amount(4) });

/** The number of decimals of a JSON number's shortest form. */
const decimals = (n: number) => new Decimal(n).decimalPlaces();

describe('money arithmetic (properties)', () => {
  it('every total has no more decimals than the currency allows', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.integer({ min: 0, max: 3000 }).map((t) => t / 100), currency, (lines, taxRate, cur) => {
        const totals = computeTotals(lines, taxRate, cur);
        for (const value of [totals.subtotal, totals.taxAmount, totals.total]) expect(decimals(value)).toBeLessThanOrEqual(minorUnits(cur));
      }),
    );
  });

  it('the subtotal is exactly the sum of the rounded line totals, and total = subtotal + tax, with no float drift', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.integer({ min: 0, max: 3000 }).map((t) => t / 100), currency, (lines, taxRate, cur) => {
        const totals = computeTotals(lines, taxRate, cur);
        const sum = lines.reduce((acc, l) => acc.plus(lineTotal(l.quantity, l.unitPrice, cur)), new Decimal(0));
        expect(new Decimal(totals.subtotal).equals(sum)).toBe(true);
        expect(new Decimal(totals.total).equals(new Decimal(totals.subtotal).plus(totals.taxAmount))).toBe(true);
      }),
    );
  });

  it('the order of the lines does not change the totals', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), fc.integer({ min: 0, max: 2500 }).map((t) => t / 100), currency, (lines, taxRate, cur) => {
        expect(computeTotals([...lines].reverse(), taxRate, cur)).toEqual(computeTotals(lines, taxRate, cur));
      }),
    );
  });

  it('rounding is half-up (away from zero) at the minor unit and symmetric around zero', () => {
    fc.assert(
      fc.property(amount(6), currency, (value, cur) => {
        const rounded = roundMoney(value, cur);
        const exact = new Decimal(value);
        const step = new Decimal(10).pow(-minorUnits(cur));
        // within half a minor unit, and a tie goes away from zero
        const distance = exact.minus(rounded).abs();
        expect(distance.lte(step.div(2))).toBe(true);
        if (distance.equals(step.div(2))) expect(rounded.abs().gt(exact.abs())).toBe(true);
        expect(roundMoney(-value, cur).equals(rounded.negated())).toBe(true);
      }),
    );
  });

  it('an amount of at most 10^15 minor units comes back from its JSON number digit for digit; one past it is refused', () => {
    const limit = BigInt(MAX_AMOUNT_MINOR_UNITS);
    const inMinorUnits = (units: bigint, cur: string) => new Decimal(units.toString()).dividedBy(new Decimal(10).pow(minorUnits(cur)));
    fc.assert(
      fc.property(fc.bigInt({ min: -limit, max: limit }), currency, (units, cur) => {
        const amount = inMinorUnits(units, cur);
        expect(new Decimal(JSON.parse(JSON.stringify({ amount: checkedAmount(amount, cur, 'lineItems') })).amount).equals(amount)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: limit + 1n, max: limit * 1000n }), fc.boolean(), currency, (units, negative, cur) => {
        expect(() => checkedAmount(inMinorUnits(negative ? -units : units, cur), cur, 'lineItems')).toThrow(AmountTooLarge);
      }),
    );
  });

  it('a line total never depends on binary float representation (0.1 × 3 = 0.30, 1.005 × 1 = 1.01)', () => {
    expect(lineTotal(3, 0.1, 'EUR').toString()).toBe('0.3');
    expect(lineTotal(1, 1.005, 'EUR').toString()).toBe('1.01');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), amount(2), (quantity, unitPrice) => {
        // with integer quantities and 2-decimal prices the exact product needs no rounding
        expect(lineTotal(quantity, unitPrice, 'EUR').equals(new Decimal(unitPrice).times(quantity))).toBe(true);
      }),
    );
  });
});
