/**
 * What must never reach a log line: credentials in headers are not logged at all (the request
 * serializer keeps method, URL and route only); the URL itself can carry capability tokens in
 * its path and the customer token in its query, and free-text messages can quote either.
 */

const REDACTED = '[redacted]';

/** Path prefixes whose next segment is a capability token (a bearer secret in the URL). */
const TOKEN_PATH_PREFIXES = ['/api/v1/configuration-sessions/', '/storefront/v1/quotes/', '/q/'];

/** Query parameters that carry a credential (`?token=` of the session stream). */
const SECRET_QUERY_PARAMS = /^(token|access_token|api_key|apikey|key|secret|signature)$/i;

/** Secrets recognisable by their shape, wherever they appear in a message. */
const SECRET_SHAPES: RegExp[] = [
  /\bqk_(live|test)_[0-9A-Za-z]+/g, // API keys
  /\badm_[0-9A-Za-z_]+/g, // the admin token
  /\bcst_[0-9A-Za-z]+/g, // customer tokens
  /\bwhsec_[0-9A-Za-z+/=_-]+/g, // webhook signing secrets
  /\b(Bearer)\s+[^\s,;"']+/gi,
];

/** The URL as it may be logged: capability-token segments and credential query values replaced. */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  let path = queryAt === -1 ? url : url.slice(0, queryAt);
  for (const prefix of TOKEN_PATH_PREFIXES) {
    if (path.startsWith(prefix) && path.length > prefix.length) {
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf('/');
      path = prefix + REDACTED + (slash === -1 ? '' : rest.slice(slash));
      break;
    }
  }
  if (queryAt === -1) return path;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq === -1 ? pair : pair.slice(0, eq);
      return eq !== -1 && SECRET_QUERY_PARAMS.test(safeDecode(name)) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/**
 * Every secret shape above has an underscore or "Bearer", every token path a slash, every
 * credential query value an equals sign: text with none of them (most log messages) is left as it is.
 */
const MAY_HOLD_SECRET = /[_/=]|bearer/i;

/** A free-text message with every recognisable secret and token-bearing URL replaced. */
export function redactText(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const shape of SECRET_SHAPES) out = out.replace(shape, (match, group1) => (typeof group1 === 'string' && /^bearer$/i.test(group1) ? `${group1} ${REDACTED}` : REDACTED));
  for (const prefix of TOKEN_PATH_PREFIXES) {
    if (!out.includes(prefix)) continue;
    out = out.split(prefix).map((part, i) => (i === 0 ? part : part.replace(/^[^/?#\s"']+/, REDACTED))).join(prefix);
  }
  return out.replace(/([?&](?:token|access_token|api_key|apikey|key|secret|signature)=)[^&\s"']*/gi, `$1${REDACTED}`);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
