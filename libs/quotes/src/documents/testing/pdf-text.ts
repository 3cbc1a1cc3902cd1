import { inflateSync } from 'node:zlib';

/** How a font's string bytes become text: its ToUnicode map (the PDF embeds every font it uses). */
type Decoder = (bytes: Buffer) => string;

/** Text drawn with no font, or one without a ToUnicode map: the PDF is not what the quote PDF writes. */
const undecodable = (font: string): Decoder => () => {
  throw new Error(`text drawn with ${font}, which has no ToUnicode map`);
};

const STREAM = /<<([^]*?)>>\s*stream\r?\n/g;

/** The content of the stream whose dictionary `match` found, inflated where it is Flate-compressed. */
function streamContent(pdf: Buffer, match: RegExpExecArray): string | null {
  const length = /\/Length (\d+)/.exec(match[1]);
  if (!length) return null;
  const start = match.index + match[0].length;
  const bytes = pdf.subarray(start, start + Number(length[1]));
  return (/\/FlateDecode/.test(match[1]) ? inflateSync(bytes) : bytes).toString('latin1');
}

/** The dictionary of each object (its text up to `stream` or `endobj`), by object number. */
function dictionaries(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of source.matchAll(/(?:^|\s)(\d+) 0 obj\s/g)) {
    const start = match.index! + match[0].length;
    const ends = [source.indexOf('stream', start), source.indexOf('endobj', start)].filter((at) => at >= 0);
    found.set(match[1], source.slice(start, Math.min(...ends)));
  }
  return found;
}

/** The content of object `id`'s stream. */
function objectStream(pdf: Buffer, source: string, id: string): string | null {
  const at = new RegExp(`(?:^|\\s)${id} 0 obj\\s`).exec(source);
  if (!at) return null;
  const dictionary = new RegExp(STREAM.source, 'y');
  dictionary.lastIndex = at.index + at[0].length;
  const match = dictionary.exec(source);
  return match && streamContent(pdf, match);
}

/**
 * A ToUnicode CMap as pdfkit writes it for an embedded font: `bfrange` lines mapping a run of
 * two-byte codes to an array of UTF-16 hex strings.
 */
function toUnicode(cmap: string): Decoder {
  const map = new Map<number, string>();
  for (const [, start, values] of cmap.matchAll(/<([0-9a-fA-F]+)>\s*<[0-9a-fA-F]+>\s*\[([^\]]*)\]/g)) {
    [...values.matchAll(/<([0-9a-fA-F\s]*)>/g)].forEach(([, hex], i) => {
      map.set(parseInt(start, 16) + i, Buffer.from(hex.replace(/\s/g, ''), 'hex').swap16().toString('utf16le'));
    });
  }
  return (bytes) => Array.from({ length: bytes.length / 2 }, (_, i) => map.get(bytes.readUInt16BE(2 * i)) ?? '\uFFFD').join('');
}

/** The decoder of each font resource name (`F1`, `F2`: pdfkit numbers them once per document). */
function fontDecoders(pdf: Buffer): Map<string, Decoder> {
  const source = pdf.toString('latin1');
  const objects = dictionaries(source);
  const decoders = new Map<string, Decoder>();
  for (const [, name, id] of source.matchAll(/\/(F\d+) (\d+) 0 R/g)) {
    const cmap = /\/ToUnicode (\d+) 0 R/.exec(objects.get(id) ?? '');
    const content = cmap && objectStream(pdf, source, cmap[1]);
    decoders.set(name, content ? toUnicode(content) : undecodable(name));
  }
  return decoders;
}

/** The content of every stream of the PDF. */
function streams(pdf: Buffer): string[] {
  const found: string[] = [];
  for (const match of pdf.toString('latin1').matchAll(STREAM)) {
    const content = streamContent(pdf, match as RegExpExecArray);
    if (content !== null) found.push(content);
  }
  return found;
}

/** Each `TJ` array of a content stream as one line, its hex strings decoded by the font `Tf` last selected. */
function textLines(content: string, fonts: Map<string, Decoder>): string[] {
  const lines: string[] = [];
  let decode: Decoder = undecodable('no font');
  for (const match of content.matchAll(/\/(F\d+) [\d.]+ Tf|\[((?:\s*(?:<[0-9a-fA-F]*>|-?[\d.]+))*)\s*\]\s*TJ/g)) {
    if (match[1] !== undefined) decode = fonts.get(match[1]) ?? undecodable(match[1]);
    else lines.push(decode(Buffer.from([...match[2].matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => m[1]).join(''), 'hex')));
  }
  return lines;
}

/**
 * The text drawn in a PDF written by pdfkit: each `TJ` array becomes one line, decoded through
 * its embedded font's ToUnicode map. Compressed or not.
 */
export function pdfText(pdf: Buffer): string {
  const fonts = fontDecoders(pdf);
  return streams(pdf).flatMap((content) => textLines(content, fonts)).join('\n');
}

/**
 * The text of each page, in page order (the `/Kids` of the page tree pdfkit writes: one flat
 * list, one content stream per page), each as `pdfText` shows it. For assertions about what
 * ends up on the same page.
 */
export function pdfPages(pdf: Buffer): string[] {
  const source = pdf.toString('latin1');
  const fonts = fontDecoders(pdf);
  const objects = dictionaries(source);
  const kids = /\/Type \/Pages\b[^]*?\/Kids \[([^\]]*)\]/.exec(source);
  if (!kids) throw new Error('no page tree');
  return [...kids[1].matchAll(/(\d+) 0 R/g)].map(([, page]) => {
    const contents = /\/Contents (\d+) 0 R/.exec(objects.get(page) ?? '');
    const content = contents && objectStream(pdf, source, contents[1]);
    if (!content) throw new Error(`no readable content stream for page object ${page}`);
    return textLines(content, fonts).join('\n');
  });
}
