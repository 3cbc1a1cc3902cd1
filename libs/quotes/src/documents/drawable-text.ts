import { hasGlyph } from './pdf-fonts';

/**
 * Text as the quote PDF can draw it with its embedded fonts (pdf-fonts.ts), composed (NFC) so a
 * letter and its mark are one glyph where the font has one:
 *
 * - line ends (`\r\n`, `\r`) become `\n`, tabs a space; other control characters and the invisible
 *   format characters (bidi overrides such as U+202E, zero-width spaces, the BOM) are dropped;
 * - a character the fonts have no glyph for (Chinese, Thai, Devanagari, …) becomes `?`;
 * - so does a letter of a right-to-left script (Hebrew, Arabic, …): pdfkit lays text out left to
 *   right only, and would draw such a word with its letters in reverse.
 *
 * Until 2026-11-27 the PDF used the standard Helvetica, which draws Windows-1252 only: other
 * letters were replaced by look-alikes (`Ł` → `L`), and before that they garbled their text.
 */
export function drawable(text: string): string {
  let out = '';
  for (const char of text.normalize('NFC').replace(/\r\n?/g, '\n')) {
    if (char === '\n') out += char;
    else if (char === '\t') out += ' ';
    else if (INVISIBLE.test(char)) continue;
    else out += RIGHT_TO_LEFT.test(char) || !hasGlyph(char) ? '?' : char;
  }
  return out;
}

/** Control characters (C0, DEL, C1) and format characters (Cf: bidi controls, zero-width, BOM). */
const INVISIBLE = /^[\p{Cc}\p{Cf}]$/u;

/** The right-to-left scripts of Unicode's current and historic use that fonts like DejaVu cover in part. */
const RIGHT_TO_LEFT = /^[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}]$/u;
