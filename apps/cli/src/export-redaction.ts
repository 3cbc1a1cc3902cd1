import { REDACTED, redactText } from '@lib/observability';

/**
 * What `audit:export` must never write: a secret or a capability token. The export goes to
 * external auditors, so it holds what happened and who caused it, never what would let its reader
 * act as the organization, its webhook receiver or its customers. Hashes (`keyHash`, `tokenHash`,
 * `customerTokenHash`) stay: they cannot be turned back into the token, and auditors correlate by them.
 */

type FieldRule = (value: unknown) => unknown;

const redacted: FieldRule = (value) => (value === null || value === undefined ? value : REDACTED);

/** `{PUBLIC_BASE_URL}/q/{quoteToken}`: the link stays recognisable, the token (and anything after it) goes. */
const quoteLink: FieldRule = (value) => {
  if (typeof value !== 'string') return value;
  const at = value.lastIndexOf('/q/');
  return at === -1 ? REDACTED : `${value.slice(0, at)}/q/${REDACTED}`;
};

/** An organization's own endpoint: where it points stays, credentials in its user info or query go. */
const endpointUrl: FieldRule = (value) => {
  if (typeof value !== 'string') return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return redactText(value);
  }
  if (url.username === '' && url.password === '') return redactText(value);
  return redactText(`${url.protocol}//${REDACTED}@${url.host}${url.pathname}${url.search}${url.hash}`);
};

/** `qk_live_` and four characters: what the API lists to tell keys apart, never more of the key. */
const apiKeyPrefix: FieldRule = (value) => (typeof value === 'string' ? value.slice(0, 12) : value);

const settingsUrls = { 'settings.webhookUrl': endpointUrl, 'settings.pricingWebhookUrl': endpointUrl };

/**
 * Per event type, the data fields (dotted paths) that hold a secret, a capability token or a
 * credential, and how each is written. Every event type of the domain libraries was surveyed; the
 * ones not listed hold no such field (sessions and pricing grants record only token hashes).
 */
const FIELD_RULES: Readonly<Record<string, Readonly<Record<string, FieldRule>>>> = {
  // The signing secret, sealed: the export never needs it, and with the signing-secret key
  // (a copy of DATA_DIR, a leaked SIGNING_SECRET_KEY) it would open.
  'organization.v2.signingSecretRotated': { sealedSecret: redacted },
  // the signing secret in clear, as stored before secrets were sealed (2026-11-26)
  'organization.v1.signingSecretRotated': { secret: redacted },
  'organization.v1.apiKeyCreated': { keyPrefix: apiKeyPrefix },
  'organization.v1.created': settingsUrls,
  'organization.v1.settingsChanged': settingsUrls,
  // quotes first sent before links were derived carry the customer's working link
  'quote.v1.sent': { customerUrl: quoteLink },
};

/** Field names that only ever hold a credential, wherever they appear (`tokenHash` and the like are not among them). */
const CREDENTIAL_FIELDS = new Set(['secret', 'sealedSecret', 'signingSecret', 'token', 'customerToken', 'quoteToken', 'capabilityToken', 'apiKey', 'password']);

/**
 * The defensive pass over anything written: strings of a known secret shape (API keys, the admin
 * token, customer tokens, signing secrets, capability tokens, bearer credentials), token path
 * segments of URLs and credential query values are replaced, and so is any value under a field
 * named as a credential.
 */
export function redactSecretShapes<T>(value: T): T {
  return scrub(value) as T;
}

function scrub(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([name, field]) => [name, CREDENTIAL_FIELDS.has(name) && typeof field === 'string' ? REDACTED : scrub(field)]));
}

/**
 * The data of an event as the export writes it. The rules of both the upcast type and the stored
 * type apply, so an event stored under an older type name is redacted like its current form.
 * The explicit rules see the original value and have the last word; everything else gets the
 * defensive pass.
 */
export function redactEventData(types: { type: string; storedType: string }, data: unknown): unknown {
  const out = scrub(data);
  if (out === null || typeof out !== 'object') return out;
  for (const type of new Set([types.type, types.storedType])) {
    for (const [path, rule] of Object.entries(FIELD_RULES[type] ?? {})) {
      const names = path.split('.');
      const original = names.reduce<unknown>((at, name) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[name] : undefined), data);
      if (original === undefined) continue;
      const parent = names.slice(0, -1).reduce<unknown>((at, name) => (at as Record<string, unknown>)[name], out) as Record<string, unknown>;
      parent[names[names.length - 1]] = rule(original);
    }
  }
  return out;
}
