import { readFileSync } from 'node:fs';
import { create, type Font } from 'fontkit';

/**
 * The fonts of the quote PDF: DejaVu Sans and DejaVu Sans Bold (the `dejavu-fonts-ttf` package,
 * Bitstream Vera licence), embedded in each PDF as a subset of the glyphs it draws. They draw
 * Latin, Greek, Cyrillic, Armenian and Georgian text and every currency sign `Intl` writes in the
 * documents' languages. Each is parsed once per process and shared by every document: parsing
 * it per document cost 45 ms a PDF.
 */
export const REGULAR = 'DejaVuSans';
export const BOLD = 'DejaVuSans-Bold';

let loaded: Record<typeof REGULAR | typeof BOLD, Font> | null = null;

function fonts(): Record<typeof REGULAR | typeof BOLD, Font> {
  loaded ??= { [REGULAR]: load('DejaVuSans.ttf'), [BOLD]: load('DejaVuSans-Bold.ttf') };
  return loaded;
}

/**
 * The font, with a glyph made for each of its characters. fontkit keeps the first glyph object it
 * makes for a glyph id and pdfkit takes the glyph's characters from it for the PDF's text layer. A
 * glyph first made as a part of another (`Z` of `Ż`, while a PDF's subset is written) has none,
 * and every later PDF then drew `Z` as an image without text: `wischensumme` when copied or
 * searched. Made from the character map first, each glyph keeps its character.
 */
function load(file: string): Font {
  const font = create(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${file}`)));
  for (const codePoint of font.characterSet) font.glyphForCodePoint(codePoint);
  const layout = font.layout.bind(font);
  font.layout = (text, features) => layout(text, features ?? WITHOUT_LIGATURES);
  return font;
}

/**
 * pdfkit lays text out with the font's default features. Ligatures would draw `ff` as the glyph of
 * `ﬀ`, and that is the text a reader copies or searches (`Oﬀerte`, not `Offerte`).
 */
const WITHOUT_LIGATURES = { liga: false, clig: false };

/** Makes `REGULAR` and `BOLD` usable in `doc.font(…)`. */
export function registerFonts(doc: PDFKit.PDFDocument): void {
  // pdfkit takes a parsed fontkit font as well as the file's bytes; its typings list only the latter.
  for (const [name, font] of Object.entries(fonts())) doc.registerFont(name, font as unknown as Buffer);
}

/** Whether both fonts have a glyph for the character (one code point). Asked for every character a PDF draws. */
export function hasGlyph(char: string): boolean {
  const codePoint = char.codePointAt(0)!;
  const { [REGULAR]: regular, [BOLD]: bold } = fonts();
  return regular.hasGlyphForCodePoint(codePoint) && bold.hasGlyphForCodePoint(codePoint);
}
