import sanitizeHtml from 'sanitize-html';

/** A code element's start or end tag (without its `>`): its content is code, not text. */
const CODE_TAG = /^<(\/?)(script|style)(?:[\s/]|$)/i;
const ENTITY = /&[a-z#0-9]+;/i;
/** Entity decodings after the first strip; each is followed by another strip. */
const DECODE_ROUNDS = 5;

/**
 * What between `<` and `>` is an e-mail address, not markup: `Ada <ada@example.com>`. HTML would
 * read it as an element of that name; stripped as one, the address was lost (found by a review,
 * 2026-11-27). Kept without its brackets: the output still holds no complete tag.
 */
const BRACKETED_ADDRESS = /^[A-Za-z][^\s<>@"'=/]*@[^\s<>@"'=/]+\.[^\s<>@"'=/]+$/;

/** `<` starts a tag when a letter, `/`, `!` or `?` follows (as in HTML; `5 < 6` is text). */
const opensTag = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '/' || c === '!' || c === '?';

/**
 * Removes every complete tag — `<`, a letter, `/`, `!` or `?`, and everything up to the next `>` —
 * with the content of script and style elements, except that an e-mail address in brackets keeps
 * the address (BRACKETED_ADDRESS); all other text is kept, including a `<` that no
 * tag follows and an unclosed tag at the end. One pass, linear: the output is built as a stack,
 * and a `>` removes everything from the first tag start still in it. So a tag that only forms once
 * another is gone (`<<b>script>`, `<scr<b>ipt>`) goes too, and the output holds no complete tag.
 */
function removeTags(input: string): string {
  if (!input.includes('<')) return input;
  const kept: string[] = [];
  let tagStart = -1; // the first tag start in `kept`; no `>` follows it there
  let code: { name: string; start: number } | null = null; // where the open script/style element began
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === '>' && tagStart >= 0) {
      const tag = CODE_TAG.exec(kept.slice(tagStart, tagStart + 9).join(''));
      // An address is kept only where no `<` comes right before it: `<<a@b.co> onerror=…>` would
      // start a tag with the address as its name once the brackets went (found by a review), so
      // that one goes as the tag it is. A kept address is never read again (no tag start before
      // it remains), so each character is sliced here at most once.
      const address = !code && kept.length - tagStart <= 256 && kept[tagStart - 1] !== '<' ? kept.slice(tagStart + 1).join('') : '';
      kept.length = tagStart;
      tagStart = -1;
      if (address && BRACKETED_ADDRESS.test(address)) {
        for (const letter of address) kept.push(letter);
        continue;
      }
      if (code && code.start > kept.length) code = null;
      if (tag) {
        const closing = tag[1] === '/';
        const name = tag[2].toLowerCase();
        if (!closing && !code) code = { name, start: kept.length };
        else if (closing && code?.name === name) {
          kept.length = code.start;
          code = null;
        }
      }
      continue;
    }
    if (tagStart < 0 && kept[kept.length - 1] === '<' && opensTag(c)) tagStart = kept.length - 1;
    kept.push(c);
  }
  return kept.join('');
}

/**
 * HTML entities decoded (`&amp;` → `&`, `&lt;` → `<`). sanitize-html does the decoding; every `<`
 * is escaped first so that it reads the whole input as text and drops none of it.
 */
function decodeEntities(text: string): string {
  if (!ENTITY.test(text)) return text;
  const escaped = sanitizeHtml(text.replace(/</g, '&lt;'), { allowedTags: [], allowedAttributes: {} });
  return escaped.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Reduces free text to plain text: tags (and script/style content) are removed, entities decoded,
 * and the tags that decoding brings out removed again, so that entity-encoded markup cannot turn
 * back into a tag. Text that is not a complete tag is kept (`PO A<B-7`). Output is plain text and
 * must still be escaped wherever it is rendered as HTML.
 */
export function stripHtml(input: string): string {
  let text = removeTags(input);
  for (let round = 0; round < DECODE_ROUNDS; round++) {
    const decoded = decodeEntities(text);
    if (decoded === text) break;
    text = removeTags(decoded);
  }
  return text.trim();
}
