/**
 * What must never reach a log line: credentials in headers are not logged at all (the request
 * serializer keeps method, URL and route only); the URL itself can carry capability tokens in
 * its path and the customer token in its query, and free-text messages or a request id sent by
 * the caller can quote either.
 */

export const REDACTED = '[redacted]';

/** Path prefixes whose next segment is a capability token (a bearer secret in the URL). */
const TOKEN_PATH_PREFIXES = ['/api/v1/configuration-sessions/', '/storefront/v1/quotes/', '/q/'];

/** Words that make a query parameter a credential wherever they stand in its name (`client_secret`, `accessToken`, `api_key[]`). */
const CREDENTIAL_PARTS = ['token', 'secret', 'password', 'passwd', 'passcode', 'apikey', 'accesskey', 'privatekey', 'credential', 'signature'];

/** Endings that make one (`x-api-key`, `hub.sig`, `x-session`), and the kinds of `code` that are one (`code`, `auth_code`, `otp-code`; not `postal_code`). */
const CREDENTIAL_ENDINGS = /(key|pwd|pass|sig|auth|session|(^|auth|access|verification|verify|oauth|otp|mfa|activation|reset|confirm|confirmation|security|pairing)code)$/;

/**
 * Whether a query parameter's name says its value is a credential. The name is compared in lower
 * case without separators or brackets (`client_secret`, `clientSecret`, `api_key[]`,
 * `auth[token]` alike). Harmless names that end alike (`sortKey`, `nextPageToken`) are hidden too:
 * a value too many in `[redacted]` costs a log reader little, one too few leaks a credential.
 * Until 2026-11-27 only seven whole names were known, and `code=` (an Azure Functions key),
 * `client_secret=`, `password=` and `sig=` (a SAS signature) went out as they were (found by a
 * review of the audit export; camelCase, bracketed and `*_code` names by the reviews of that fix).
 */
function isCredentialName(name: string): boolean {
  const compact = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return CREDENTIAL_PARTS.some((part) => compact.includes(part)) || CREDENTIAL_ENDINGS.test(compact);
}

/** A credential, or an e-mail filter in any casing or bracketed form (`email`, `EMAIL`, `email[]`, `email[$eq]`). */
const unloggedQueryParam = (name: string): boolean => isCredentialName(name) || /^email(\[.*)?$/i.test(name);

/** Secrets recognisable by their shape, wherever they appear in a message. */
const SECRET_SHAPES: RegExp[] = [
  /\bqk_(live|test)_[0-9A-Za-z]+/g, // API keys
  /\badm_[0-9A-Za-z_]+/g, // the admin token
  /\bcst_[0-9A-Za-z]+/g, // customer tokens
  /\bpct_[0-9A-Za-z_-]+/g, // pricing capability tokens (base64url)
  /\bwhsec_[0-9A-Za-z+/=_-]+/g, // webhook signing secrets
  // Customer quote tokens have no prefix: exactly 43 base62 characters (quoteToken). Longer runs
  // stay, so that hex hashes (64 characters), which audit exports keep on purpose, are not taken for one.
  /(?<![0-9A-Za-z])[0-9A-Za-z]{43}(?![0-9A-Za-z])/g,
  /\b(Bearer)\s+[^\s,;"']+/gi,
];

/** The same prefixes as path segments, to compare with a request path segment by segment. */
const TOKEN_PATH_SEGMENTS = TOKEN_PATH_PREFIXES.map((prefix) => prefix.split('/').filter(Boolean));

/** An absolute-form request target (`GET http://host/q/…`): the router drops this part (find-my-way's FULL_PATH_REGEXP). */
const ABSOLUTE_FORM_ORIGIN = /^https?:\/\/.*?(?=\/)/;

/**
 * The URL as it may be logged: the token segment of a capability-token route and credential
 * query values replaced, and so is any segment or query value shaped like a key, token or secret.
 * The shapes do not depend on the router: a quote token under `//q/`, `/Q/` or
 * `/storefront/v1/../v1/quotes/`, which no route matches (404), is replaced all the same.
 */
export function redactUrl(url: string): string {
  const origin = url.startsWith('/') ? '' : (ABSOLUTE_FORM_ORIGIN.exec(url)?.[0] ?? '');
  const queryAt = url.indexOf('?', origin.length);
  const path = redactPathToken(url.slice(origin.length, queryAt === -1 ? undefined : queryAt))
    .split('/')
    .map((segment) => (holdsSecretShape(segment) ? REDACTED : segment))
    .join('/');
  if (queryAt === -1) return origin + path;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      if (eq !== -1 && (unloggedQueryParam(safeDecode(name)) || holdsSecretShape(pair.slice(eq + 1)))) return `${name}=${REDACTED}`;
      return holdsSecretShape(pair) ? REDACTED : pair;
    })
    .join('&');
  return `${origin}${path}?${query}`;
}

/**
 * The router decodes percent-escapes before matching (`/%71/{token}` is `/q/{token}`), compares
 * case-sensitively (Fastify's default) and splits segments at a literal `/` only (`%2F` stays in
 * its segment), so the path is compared segment by segment, decoded, and only the token segment
 * is replaced: the rest is logged as it was sent.
 */
function redactPathToken(path: string): string {
  for (const prefix of TOKEN_PATH_SEGMENTS) {
    const tokenAt = afterSegments(path, prefix);
    if (tokenAt === -1 || tokenAt === path.length || path[tokenAt] === '/') continue;
    const tokenEnd = path.indexOf('/', tokenAt);
    return path.slice(0, tokenAt) + REDACTED + (tokenEnd === -1 ? '' : path.slice(tokenEnd));
  }
  return path;
}

/** Where the segment after `names` starts when the path begins with them, else -1. */
function afterSegments(path: string, names: string[]): number {
  if (path[0] !== '/') return -1;
  let at = 1;
  for (const name of names) {
    const end = path.indexOf('/', at);
    if (end === -1) return -1;
    const segment = path.slice(at, end);
    if (segment !== name && decodeAsciiEscapes(segment) !== name) return -1;
    at = end + 1;
  }
  return at;
}

/**
 * Escapes of ASCII characters decoded, any other left as it is: the route prefixes are ASCII, so
 * this decides a match as the router does, and it cannot throw on malformed encoding (which the
 * router refuses, while the token segment of such a path is still replaced here).
 */
function decodeAsciiEscapes(segment: string): string {
  if (!segment.includes('%')) return segment;
  return segment.replace(/%[0-7][0-9A-Fa-f]/g, (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)));
}

/**
 * A key, token or secret pasted anywhere into a URL (`/api/v1/quotes/qk_live_…` by mistake, as a
 * plain or percent-encoded segment or query value): the whole segment or value is replaced.
 */
function holdsSecretShape(part: string): boolean {
  const decoded = decodeAsciiEscapes(part);
  return MAY_HOLD_SECRET.test(decoded) && SECRET_SHAPE_TESTS.some((shape) => shape.test(decoded));
}

/** The shapes without the global flag, whose `test` would otherwise carry `lastIndex` from one call to the next. */
const SECRET_SHAPE_TESTS = SECRET_SHAPES.map((shape) => new RegExp(shape.source, shape.flags.replace('g', '')));

/**
 * Every secret shape above has an underscore, "Bearer" or 43 alphanumerics in a row, every token
 * path a slash, every credential query value an equals sign: text with none of them (most log
 * messages) is left as it is.
 */
const MAY_HOLD_SECRET = /[_/=]|bearer|[0-9A-Za-z]{43}/i;

/** A free-text message with every recognisable secret and token-bearing URL replaced. */
export function redactText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const shape of SECRET_SHAPES) out = out.replace(shape, (match, group1) => (typeof group1 === 'string' && /^bearer$/i.test(group1) ? `${group1} ${REDACTED}` : REDACTED));
  for (const prefix of TOKEN_PATH_PREFIXES) {
    if (!out.includes(prefix)) continue;
    out = out.split(prefix).map((part, i) => (i === 0 ? part : part.replace(/^[^/?#\s"']+/, REDACTED))).join(prefix);
  }
  return out
    .replace(QUERY_PAIR, (pair, start: string, name: string) => (isCredentialName(safeDecode(name)) ? `${start}${name}=${REDACTED}` : pair))
    .replace(URL_PASSWORD, `$1${REDACTED}@`);
}

/** What cannot stand in an e-mail address as it appears in a message: blanks, quotes, brackets and separators. */
const NOT_IN_DOMAIN = /[\s<>()[\]{},;:"'`‹›«»]/u;
/** The same before the `@`, but for the apostrophe a name may hold (`o'brien@…`). */
const NOT_IN_LOCAL_PART = /[\s<>()[\]{},;:"`‹›«»]/u;

/**
 * Every e-mail address in `text` as `[e-mail]`: around each `@`, the run of characters an address
 * may hold (any letter, Unicode ones too: `jürgen@bücher.de`), when the part after it has a dot.
 * One pass, linear in the text: a pattern tried at every position took seconds on 50 KB.
 */
function hideEmailAddresses(text: string): string {
  let out = '';
  let copied = 0;
  let at = text.indexOf('@');
  while (at !== -1) {
    let start = at;
    while (start > copied && !NOT_IN_LOCAL_PART.test(text[start - 1]) && text[start - 1] !== '@') start--;
    // An apostrophe before the name quotes the address.
    while (start < at && text[start] === "'") start++;
    let end = at + 1;
    while (end < text.length && !NOT_IN_DOMAIN.test(text[end]) && text[end] !== '@') end++;
    // A trailing full stop ends the sentence, not the domain.
    while (end > at + 1 && text[end - 1] === '.') end--;
    const domain = text.slice(at + 1, end);
    if (start < at && /^[^.]+(\.[^.]+)*\.\p{L}{2,}$/u.test(domain)) {
      out += `${text.slice(copied, start)}[e-mail]`;
      copied = end;
    }
    at = text.indexOf('@', Math.max(at + 1, end));
  }
  return out + text.slice(copied);
}

/**
 * A log message with what redactText hides and every e-mail address hidden as well: addresses are
 * personal data, which the logs leave out (observability.md). Only for logs: an audit export
 * keeps a customer's address, its auditors need it. Until 2026-11-27 a mail server's refusal
 * ("550 <ada@example.com>: Recipient address rejected") was logged with the address (found by a
 * review).
 */
export function redactLogText(text: string): string {
  const redacted = redactText(text);
  return redacted.includes('@') ? hideEmailAddresses(redacted) : redacted;
}

/** A query parameter in free text: its name and value (kept unless isCredentialName). */
const QUERY_PAIR = /([?&;])([^=&;#\s"'?]+)=[^&;#\s"']*/g;

/** The password of a URL's user info (`https://user:password@host`); the user name stays. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:)[^\s/?#]*@/gi;

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
