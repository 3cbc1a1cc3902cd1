/** The part of fontkit (pdfkit's font engine, untyped) the quote PDF uses. */
declare module 'fontkit' {
  export interface Font {
    readonly characterSet: number[];
    hasGlyphForCodePoint(codePoint: number): boolean;
    glyphForCodePoint(codePoint: number): unknown;
    layout(text: string, features?: Record<string, boolean> | string[]): unknown;
  }
  export function create(buffer: Uint8Array): Font;
}
