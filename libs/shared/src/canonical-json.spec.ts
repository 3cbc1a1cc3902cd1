import { canonicalJson } from './canonical-json';

/** The IEEE 754 double with the given bit pattern, as RFC 8785 Appendix B lists them. */
function double(hex: string): number {
  return Buffer.from(hex, 'hex').readDoubleBE(0);
}

describe('canonicalJson (RFC 8785)', () => {
  describe('given the sample of RFC 8785 §3.2.2', () => {
    it('then members are sorted, numbers and strings printed the ECMAScript way, without whitespace', () => {
      const parsed = JSON.parse(
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
          ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
      );
      expect(canonicalJson(parsed)).toBe(
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
          '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
      );
    });
  });

  describe('given the property names of RFC 8785 §3.2.3', () => {
    it('then they are ordered by UTF-16 code units', () => {
      const value = {
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew Letter Dalet With Dagesh',
        '1': 'One',
        '\ud83d\ude00': 'Emoji: Grinning Face',
        '\u0080': 'Control',
        '\u00f6': 'Latin Small Letter O With Diaeresis',
      };
      expect(canonicalJson(value)).toBe(
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
          '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
      );
    });
  });

  describe('given the number samples of RFC 8785 Appendix B', () => {
    it.each([
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ])('then the double 0x%s prints as %s', (hex, expected) => {
      expect(canonicalJson(double(hex))).toBe(expected);
    });

    it('then 1e21, 1e-7 and -0 print as 1e+21, 1e-7 and 0', () => {
      expect(canonicalJson([1e21, 1e-7, -0])).toBe('[1e+21,1e-7,0]');
    });

    it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('then %p is refused', (n) => {
      expect(() => canonicalJson({ n })).toThrow(TypeError);
    });
  });

  describe('given values JSON cannot carry', () => {
    it('then undefined properties are left out', () => {
      expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
    });

    it('then undefined array entries, functions, bigints and class instances are refused', () => {
      expect(() => canonicalJson([undefined])).toThrow(TypeError);
      expect(() => canonicalJson({ f: () => 1 })).toThrow(TypeError);
      expect(() => canonicalJson({ n: BigInt(1) })).toThrow(TypeError);
      expect(() => canonicalJson({ d: new Date(0) })).toThrow(TypeError);
    });
  });

  describe('given nested objects and arrays', () => {
    it('then nested members are sorted too while array order is kept', () => {
      expect(canonicalJson({ z: [{ b: 2, a: 1 }, 3], a: { y: null, x: 'x' } })).toBe('{"a":{"x":"x","y":null},"z":[{"a":1,"b":2},3]}');
    });
  });
});
