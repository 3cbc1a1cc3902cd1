/**
 * The first `count` characters (code points) of a text. `String.prototype.slice` counts UTF-16
 * code units, and cutting between the two halves of a surrogate pair (an emoji, 𝄞) left a lone
 * surrogate that strict JSON and UTF-8 consumers refuse.
 */
export function firstCharacters(text: string, count: number): string {
  if (text.length <= count) return text;
  let end = 0;
  for (let taken = 0; taken < count && end < text.length; taken++) end += text.codePointAt(end)! > 0xffff ? 2 : 1;
  return text.slice(0, end);
}

/** The text, or its first `count` characters and `…` when it is longer. */
export function shortened(text: string, count: number): string {
  const shown = firstCharacters(text, count);
  return shown === text ? text : `${shown}…`;
}

/** Whether a text holds half of a surrogate pair without the other half (not well-formed Unicode). */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

const LONE_SURROGATE = /\p{Cs}/u;
