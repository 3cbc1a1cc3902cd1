import { fill, isLocale, LANGUAGE_NAMES, LOCALES, type Locale } from './locale';

type Child = Node | string | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/**
 * Creates an element. Children are nodes or text (never parsed as HTML); `on<event>` props are
 * listeners, booleans toggle attributes, everything else is set as an attribute.
 */
export function el(tag: string, props: Props = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'function') node.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) node.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/** What the server put into the page shell (data attributes of <body>). */
export interface PageContext {
  /** relative path from the page to the site root, e.g. `../../` */
  root: string;
  locale: Locale;
  data: DOMStringMap;
}

export function pageContext(): PageContext {
  const data = document.body.dataset;
  return { root: data.root ?? '/', locale: isLocale(data.locale) ? data.locale : 'en', data };
}

export interface ApiResult<T> {
  ok: boolean;
  status: number;
  body: T | any;
}

/**
 * How long a storefront call may take before it counts as failed. A request that never answers (a
 * stalled mobile connection, a stuck proxy) otherwise never failed: the configurator said
 * "Calculating…" for ever, without the retries a failed save gets, and a submit showed nothing
 * (found by a review). Every call of these pages answers within a second or two when it answers.
 */
const REQUEST_TIMEOUT_MS = 15_000;

/** A storefront API call; a network failure, or no answer within REQUEST_TIMEOUT_MS, is status 0. */
export async function api<T>(
  context: PageContext,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<ApiResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
  try {
    const response = await fetch(`${context.root}storefront/v1/${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      referrerPolicy: 'no-referrer',
      signal: timeout.signal,
    });
    const text = await response.text();
    return { ok: response.ok, status: response.status, body: text ? JSON.parse(text) : null };
  } catch {
    return { ok: false, status: 0, body: null };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * After a request that disabled `button`: the browser moved the focus off it while it was
 * disabled (to the body). It goes back to the button, so Enter tries again, unless the user has
 * moved on meanwhile.
 */
export function refocus(button: HTMLElement | null): void {
  if (button && (document.activeElement === null || document.activeElement === document.body)) button.focus();
}

/**
 * A fresh `Idempotency-Key` (decisions §3). From getRandomValues, which unlike randomUUID also
 * exists on a page served over plain http.
 */
export function idempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The `Idempotency-Key` of each attempt of a request: the same for every attempt of the same
 * request (the same `request` value, as JSON), a fresh one once it changes. So a retry after an
 * answer that was lost gets the first answer, and another request is not mistaken for it.
 */
export function requestKeys(): (request: unknown) => string {
  let last: { basis: string; key: string } | null = null;
  return (request) => {
    const basis = JSON.stringify(request);
    if (last?.basis !== basis) last = { basis, key: idempotencyKey() };
    return last.key;
  };
}

/** Links to the same page in the other languages (`?lang=`). */
export function languageSwitch(current: Locale, label: string): HTMLElement {
  const nav = el('nav', { class: 'languages', 'aria-label': label });
  for (const locale of LOCALES) {
    const url = new URL(location.href);
    url.searchParams.set('lang', locale);
    nav.append(
      locale === current
        ? el('span', { 'aria-current': 'true', lang: locale }, LANGUAGE_NAMES[locale])
        : el('a', { href: url.pathname + url.search, lang: locale, hreflang: locale }, LANGUAGE_NAMES[locale]),
    );
  }
  return nav;
}

/**
 * A labelled input with its error slot; `name` is also the API field path the errors map to.
 * `describedBy`: the id of a message elsewhere that is about this input too.
 */
export function field(
  label: string,
  input: HTMLElement,
  options: { path: string; hint?: string; describedBy?: string; errors: Map<string, HTMLElement> },
): HTMLElement {
  const id = input.id || `f-${options.path.replace(/[^\w-]/g, '-')}`;
  input.id = id;
  const error = el('p', { class: 'error', id: `${id}-error`, 'aria-live': 'polite' });
  const hint = options.hint ? el('span', { class: 'hint', id: `${id}-hint` }, options.hint) : null;
  input.setAttribute('aria-describedby', [hint ? `${id}-hint` : '', `${id}-error`, options.describedBy ?? ''].filter(Boolean).join(' '));
  // A message about the old value goes once the customer changes it.
  input.addEventListener('input', () => {
    error.textContent = '';
    input.removeAttribute('aria-invalid');
  });
  options.errors.set(options.path, error);
  return el('div', { class: 'field' }, el('label', { for: id }, label), hint, input, error);
}

/** Shows messages in their error slots (the rest are cleared) and marks the inputs invalid. */
export function showErrors(slots: Map<string, HTMLElement>, messages: Map<string, string[]>): void {
  for (const [path, slot] of slots) {
    const list = messages.get(path) ?? [];
    slot.textContent = list.join(' ');
    const input = slot.id.endsWith('-error') ? document.getElementById(slot.id.slice(0, -'-error'.length)) : null;
    if (input) {
      if (list.length) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    }
  }
}

export { fill };

export { dateFormat, dateTimeFormat, moneyFormat, quantityFormat, taxRateFormat, unitPriceFormat } from './formats';
