import { drawable } from './drawable-text';

describe('drawable (text for the PDF standard fonts)', () => {
  it('keeps everything Windows-1252 has: ASCII, Latin-1 letters and the typographic signs at 0x80–0x9f', () => {
    const text = 'Größe (B × H): 1.200 € – “Fenster” ‘Tür’ … Œuvre, naïve, Ærø, ß, ½';
    expect(drawable(text)).toBe(text);
  });

  it('draws a Latin letter with a mark as its base letter, and the undecomposed ones as their look-alikes', () => {
    expect(drawable('Łukasz Żółć, Dvořák, Đorđe, ığdır')).toBe('Lukasz Zólc, Dvorák, Dorde, igdir');
  });

  it('draws other scripts and currency signs outside Windows-1252 as ?, one per character, leaving the rest whole', () => {
    expect(drawable('ΩΣ 中文 ok ₹1,234.50')).toBe('?? ?? ok ?1,234.50');
  });

  it('keeps line ends as \\n (CRLF, CR), tabs as spaces, and drops control and invisible format characters', () => {
    expect(drawable('a\r\nb\rc\nd\te')).toBe('a\nb\nc\nd e');
    expect(drawable('Eve\u202Elive\u200B\uFEFF\u0000\u0007\u0085!')).toBe('Evelive!');
  });
});
