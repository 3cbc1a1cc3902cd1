import { inflateSync } from 'node:zlib';

/** Windows-1252 at 0x80–0x9F (Node's TextDecoder treats the label as Latin-1 there). */
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

const decode = (bytes: Buffer) => [...bytes].map((b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b))).join('');

const STREAM = /<<([^]*?)>>\s*stream\r?\n/g;

/** The content of the stream whose dictionary `match` found, inflated where it is Flate-compressed. */
function streamContent(pdf: Buffer, match: RegExpExecArray): string | null {
  const length = /\/Length (\d+)/.exec(match[1]);
  if (!length) return null;
  const start = match.index + match[0].length;
  const bytes = pdf.subarray(start, start + Number(length[1]));
  return (/\/FlateDecode/.test(match[1]) ? inflateSync(bytes) : bytes).toString('latin1');
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

/** Each `TJ` array of a content stream as one line, its hex strings decoded as Windows-1252. */
function textLines(content: string): string[] {
  return [...content.matchAll(/\[((?:\s*(?:<[0-9a-fA-F]*>|-?[\d.]+))*)\s*\]\s*TJ/g)].map((match) =>
    decode(Buffer.from([...match[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => m[1]).join(''), 'hex')),
  );
}

/**
 * The text drawn in a PDF written by pdfkit with its standard fonts: each `TJ` array becomes one
 * line (its hex strings decoded as Windows-1252, as pdfkit encodes them). Compressed or not.
 */
export function pdfText(pdf: Buffer): string {
  return streams(pdf).flatMap(textLines).join('\n');
}

/**
 * The text of each page, in page order (the `/Kids` of the page tree pdfkit writes: one flat
 * list, one content stream per page), each as `pdfText` shows it. For assertions about what
 * ends up on the same page.
 */
export function pdfPages(pdf: Buffer): string[] {
  const source = pdf.toString('latin1');
  const object = (id: string) => new RegExp(`(?:^|\\s)${id} 0 obj\\s`).exec(source);
  const kids = /\/Type \/Pages\b[^]*?\/Kids \[([^\]]*)\]/.exec(source);
  if (!kids) throw new Error('no page tree');
  return [...kids[1].matchAll(/(\d+) 0 R/g)].map(([, page]) => {
    const at = object(page);
    const contents = at && /\/Contents (\d+) 0 R/.exec(source.slice(at.index, source.indexOf('endobj', at.index)));
    const stream = contents && object(contents[1]);
    if (!stream) throw new Error(`no content stream for page object ${page}`);
    const dictionary = new RegExp(STREAM.source, 'y');
    dictionary.lastIndex = stream.index + stream[0].length;
    const match = dictionary.exec(source);
    const content = match && streamContent(pdf, match);
    if (content === null) throw new Error(`unreadable content stream for page object ${page}`);
    return textLines(content).join('\n');
  });
}
