/**
 * Text the PDF's standard fonts can draw. Helvetica in pdfkit encodes Windows-1252 (WinAnsi):
 * a character outside it is written as a code of the wrong width and shifts every byte after it
 * in the same string, so `Łukasz` came out as `\x14\x17V¶…` with its ASCII letters lost too, and
 * a carriage return printed as `Ð` (found by a review, 2026-11-27). Until an embedded Unicode font
 * draws other scripts, each character outside Windows-1252 is replaced by one that is in it:
 *
 * - a letter with a mark by its base letter (`ć` → `c`, `Ż` → `Z`, via NFKD), and the few Latin
 *   letters that do not decompose by their look-alike (`Ł` → `L`, `đ` → `d`, `ı` → `i`);
 * - anything else (other scripts, currency signs such as `₹`) by `?`;
 * - line ends (`\r\n`, `\r`) by `\n`, tabs by a space; other control characters and the invisible
 *   format characters (bidi overrides such as U+202E, zero-width spaces, the BOM) are dropped.
 */
export function drawable(text: string): string {
  let out = '';
  for (const char of text.replace(/\r\n?/g, '\n')) {
    if (char === '\n') out += char;
    else if (char === '\t') out += ' ';
    else if (inWinAnsi(char)) out += char;
    else if (!INVISIBLE.test(char)) out += lookAlike(char);
  }
  return out;
}

/** The 27 characters Windows-1252 puts at 0x80–0x9f, where Latin-1 has control characters. */
const WIN_ANSI_EXTRA = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

function inWinAnsi(char: string): boolean {
  const code = char.codePointAt(0)!;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(char);
}

/** Control characters (C0, DEL, C1) and format characters (Cf: bidi controls, zero-width, BOM). */
const INVISIBLE = /^[\p{Cc}\p{Cf}]$/u;

/** Latin letters without a decomposition, and their look-alikes in Windows-1252. */
const UNDECOMPOSED: Record<string, string> = {
  Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', ı: 'i', Ŀ: 'L', ŀ: 'l', Ŧ: 'T', ŧ: 't', ĸ: 'k', Ŋ: 'N', ŋ: 'n', ſ: 's',
};

function lookAlike(char: string): string {
  const base = char.normalize('NFKD').replace(/\p{M}/gu, '');
  if (base !== '' && [...base].every(inWinAnsi)) return base;
  return UNDECOMPOSED[char] ?? '?';
}
