import { inflateSync } from 'node:zlib';

/** Windows-1252 at 0x80–0x9F (Node's TextDecoder treats the label as Latin-1 there). */
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

const decode = (bytes: Buffer) => [...bytes].map((b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b))).join('');

/** The content of every stream of the PDF, inflated where it is Flate-compressed. */
function streams(pdf: Buffer): string[] {
  const source = pdf.toString('latin1');
  const found: string[] = [];
  for (const match of source.matchAll(/<<([^]*?)>>\s*stream\r?\n/g)) {
    const length = /\/Length (\d+)/.exec(match[1]);
    if (!length) continue;
    const start = match.index! + match[0].length;
    const bytes = pdf.subarray(start, start + Number(length[1]));
    found.push((/\/FlateDecode/.test(match[1]) ? inflateSync(bytes) : bytes).toString('latin1'));
  }
  return found;
}

/**
 * The text drawn in a PDF written by pdfkit with its standard fonts: each `TJ` array becomes one
 * line (its hex strings decoded as Windows-1252, as pdfkit encodes them). Compressed or not.
 */
export function pdfText(pdf: Buffer): string {
  const lines: string[] = [];
  for (const content of streams(pdf)) {
    for (const match of content.matchAll(/\[((?:\s*(?:<[0-9a-fA-F]*>|-?[\d.]+))*)\s*\]\s*TJ/g)) {
      const hex = [...match[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((m) => m[1]).join('');
      lines.push(decode(Buffer.from(hex, 'hex')));
    }
  }
  return lines.join('\n');
}
