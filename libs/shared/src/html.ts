import sanitizeHtml from 'sanitize-html';

const TAG_LIKE = /<[a-zA-Z!/?]/;

function stripOnce(input: string): string {
  const text = sanitizeHtml(input, { allowedTags: [], allowedAttributes: {}, disallowedTagsMode: 'discard' });
  // sanitize-html escapes the text it keeps; we store plain text, so decode the entities again.
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/**
 * Reduces free text to plain text: tags (and script/style content) are removed. Repeated until
 * stable so that entity-encoded markup cannot turn back into a tag. Output is plain text and
 * must still be escaped wherever it is rendered as HTML.
 */
export function stripHtml(input: string): string {
  let text = input;
  for (let i = 0; i < 5 && (TAG_LIKE.test(text) || /&[a-z#0-9]+;/i.test(text)); i++) {
    const next = stripOnce(text);
    if (next === text) break;
    text = next;
  }
  return text.trim();
}
