import { api, dateFormat, dateTimeFormat, el, fill, languageSwitch, moneyFormat, pageContext, quantityFormat, refocus, requestKeys, taxRateFormat, unitPriceFormat } from './dom';
import { QUOTE } from './quote.messages';

interface CustomerQuote {
  organization: { name: string };
  quoteNumber: string;
  version: number;
  status: 'draft' | 'sent' | 'viewed' | 'accepted' | 'rejected' | 'expired';
  reference: string | null;
  notes: string | null;
  currency: string;
  taxRate: number;
  lineItems: { description: string; quantity: number; unitPrice: number; total: number }[];
  subtotal: number;
  taxAmount: number;
  total: number;
  validUntil: number;
  sentAt: number;
  respondedAt: number | null;
}

const context = pageContext();
const t = QUOTE[context.locale];
// From the address, not the shell: the HTML never repeats the credential.
const token = location.pathname.split('/').filter(Boolean).pop() ?? '';
const path = `quotes/${encodeURIComponent(token)}`;
const app = document.getElementById('app')!;
const date = dateFormat(context.locale);
const dateTime = dateTimeFormat(context.locale);
const numbers = quantityFormat(context.locale);
const rates = taxRateFormat(context.locale);

/** Sent or viewed, and not past its validity (the expiry check may not have run yet). */
const actionable = (q: CustomerQuote) => (q.status === 'sent' || q.status === 'viewed') && Date.now() < q.validUntil;

/** What the customer typed into the answer forms, carried over when the page shows a new version. */
interface Typed {
  name: string;
  reason: string;
}

/** Where a failed answer is said; in the page from the start, so that a screen reader announces the message. */
const notices = el('p', { class: 'error general', role: 'alert' });

function render(q: CustomerQuote, notice = '', typed: Typed = { name: '', reason: '' }): void {
  const money = moneyFormat(context.locale, q.currency);
  const unitPrice = unitPriceFormat(context.locale, q.currency);
  const expired = q.status === 'expired' || ((q.status === 'sent' || q.status === 'viewed') && !actionable(q));
  const status = expired ? 'expired' : q.status;
  document.title = `${fill(t.quote, { number: q.quoteNumber })} · ${q.organization.name}`;
  const org = q.organization.name;

  const banner = (() => {
    if (status === 'accepted') return el('p', { class: 'banner ok', role: 'status' }, fill(t.accepted, { date: date.format(q.respondedAt ?? Date.now()), org }));
    if (status === 'rejected') return el('p', { class: 'banner', role: 'status' }, fill(t.rejected, { date: date.format(q.respondedAt ?? Date.now()), org }));
    if (status === 'expired') return el('p', { class: 'banner warn', role: 'status' }, fill(t.expired, { date: date.format(q.validUntil), org }));
    if (status === 'draft') return el('p', { class: 'banner', role: 'status' }, fill(t.draft, { org }));
    return null;
  })();

  const cell = (text: string, numeric = false) => el('td', numeric ? { class: 'n' } : {}, text);
  // Every row has four cells (no colspan), so that a phone can drop the middle columns throughout.
  const total = (label: string, amount: string, className = '') =>
    el('tr', className ? { class: className } : {}, el('th', { scope: 'row' }, label), el('td'), el('td'), cell(amount, true));
  const table = el(
    'table',
    { class: 'lines' },
    el(
      'thead',
      {},
      el('tr', {}, el('th', { scope: 'col' }, t.description), el('th', { scope: 'col', class: 'n' }, t.quantity), el('th', { scope: 'col', class: 'n' }, t.unitPrice), el('th', { scope: 'col', class: 'n' }, t.total)),
    ),
    el(
      'tbody',
      {},
      ...q.lineItems.map((item) =>
        el(
          'tr',
          {},
          // On a phone the quantity and unit price columns give way to this line under the description.
          el('td', {}, item.description, el('span', { class: 'per-unit' }, `${numbers.format(item.quantity)} × ${unitPrice.format(item.unitPrice)}`)),
          cell(numbers.format(item.quantity), true),
          cell(unitPrice.format(item.unitPrice), true),
          cell(money.format(item.total), true),
        ),
      ),
    ),
    el(
      'tfoot',
      {},
      total(t.subtotal, money.format(q.subtotal)),
      total(fill(t.tax, { rate: rates.format(q.taxRate) }), money.format(q.taxAmount)),
      total(t.grandTotal, money.format(q.total), 'grand'),
    ),
  );

  notices.textContent = notice;
  app.replaceChildren(
    ...present(
      el(
        'header',
        { class: 'top' },
        el(
          'div',
          {},
          el('p', { class: 'org' }, org),
          el('h1', {}, fill(t.quote, { number: q.quoteNumber }), ' ', el('span', { class: `status status-${status}` }, t[`status_${status}`])),
        ),
        languageSwitch(context.locale, t.languages),
      ),
      el(
        'p',
        { class: 'muted meta' },
        [fill(t.version, { version: q.version }), fill(t.sentOn, { date: date.format(q.sentAt) }), fill(t.validUntil, { date: dateTime.format(q.validUntil) })].join(' · '),
      ),
      q.reference ? el('p', {}, fill(t.reference, { reference: q.reference })) : null,
      banner,
      notices,
      el('div', { class: 'table-wrap' }, table),
      q.notes ? el('p', { class: 'notes' }, q.notes) : null,
      el('p', {}, el('a', { href: `${context.root}storefront/v1/${path}/pdf`, download: `${q.quoteNumber}.pdf`, class: 'pdf' }, t.pdf)),
      actionable(q) ? responses(q.version, typed) : null,
    ),
  );
}

const present = (...nodes: (Node | null)[]): Node[] => nodes.filter((node): node is Node => node !== null);

/** The accept and decline forms; both answer `version`, the version on screen, never a later one. */
function responses(version: number, typed: Typed): HTMLElement {
  const confirmError = el('p', { class: 'error', id: 'confirm-error', 'aria-live': 'polite' });
  const confirm = el('input', {
    type: 'checkbox', id: 'confirm', required: true, 'aria-describedby': 'confirm-error',
    onchange: () => {
      if (!confirm.checked) return;
      confirmError.textContent = '';
      confirm.removeAttribute('aria-invalid');
    },
  }) as HTMLInputElement;
  const name = el('input', { id: 'accept-name', autocomplete: 'name', maxlength: 200, value: typed.name }) as HTMLInputElement;
  const reason = el('textarea', { id: 'reason', rows: 3, maxlength: 2000 }, typed.reason) as HTMLTextAreaElement;
  const accept = el(
    'form',
    {
      class: 'respond', novalidate: true, 'aria-labelledby': 'accept-title',
      onsubmit: (e: Event) => {
        e.preventDefault();
        if (!confirm.checked) {
          confirmError.textContent = t.confirmRequired;
          confirm.setAttribute('aria-invalid', 'true');
          confirm.focus();
          return;
        }
        void respond('accept', { name: name.value.trim() || null, version });
      },
    },
    el('h2', { id: 'accept-title' }, t.acceptTitle),
    el('div', { class: 'field' }, el('label', { for: 'accept-name' }, t.name), name),
    el('div', { class: 'choice' }, confirm, el('label', { for: 'confirm' }, t.confirm)),
    confirmError,
    el('button', { type: 'submit', class: 'primary' }, t.accept),
  );
  const reject = el(
    'form',
    {
      class: 'respond', novalidate: true, 'aria-labelledby': 'reject-title',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void respond('reject', { name: name.value.trim() || null, reason: reason.value.trim() || null, version });
      },
    },
    el('h2', { id: 'reject-title' }, t.rejectTitle),
    el('div', { class: 'field' }, el('label', { for: 'reason' }, t.reason), reason),
    el('button', { type: 'submit' }, t.reject),
  );
  return el('div', { class: 'responses' }, accept, reject);
}

/**
 * The `Idempotency-Key` of the answer: the same for every attempt of the same answer, so a retry
 * after an answer that was lost is told the quote is answered, not refused as already answered.
 */
const answerKey = requestKeys();

/**
 * Sends the answer. A failure leaves the page as it is, typed text included, and says so; only a
 * 409 (the quote changed meanwhile) shows the quote as it is now, with the name and reason typed
 * carried over (not the confirmation: that was for the version answered).
 */
async function respond(action: 'accept' | 'reject', body: { name: string | null; reason?: string | null; version: number }): Promise<void> {
  const buttons = (disabled: boolean) => app.querySelectorAll('button').forEach((button) => ((button as HTMLButtonElement).disabled = disabled));
  const pressed = document.activeElement instanceof HTMLButtonElement ? document.activeElement : null;
  buttons(true);
  notices.textContent = '';
  const res = await api<CustomerQuote>(context, 'POST', `${path}/${action}`, { body, headers: { 'Idempotency-Key': answerKey([action, body]) } });
  if (res.ok) {
    render(res.body);
    (app.querySelector('.banner') as HTMLElement | null)?.setAttribute('tabindex', '-1');
    (app.querySelector('.banner') as HTMLElement | null)?.focus();
    return;
  }
  const again = res.status === 409 ? await api<CustomerQuote>(context, 'GET', path) : null;
  if (again?.ok) {
    const typed = { name: (app.querySelector('#accept-name') as HTMLInputElement | null)?.value ?? '', reason: (app.querySelector('#reason') as HTMLTextAreaElement | null)?.value ?? '' };
    render(again.body, refusal(again.body, body.version), typed);
    // The page was drawn anew: the focus goes to what it says now (why the answer was refused, or
    // the banner of a revision in progress), not to the body.
    const said = notices.textContent ? notices : (app.querySelector('.banner') as HTMLElement | null);
    said?.setAttribute('tabindex', '-1');
    said?.focus();
    return;
  }
  buttons(false);
  refocus(pressed);
  notices.textContent = t.failed;
}

/**
 * Why a 409 refused the answer: a later version arrived meanwhile (it can be answered now), or the
 * quote is closed. Nothing for a revision in progress: its banner says a new version is coming,
 * which "can no longer be answered" would contradict.
 */
function refusal(q: CustomerQuote, answered: number): string {
  if (q.status === 'draft') return '';
  return q.version !== answered && actionable(q) ? fill(t.changed, { org: q.organization.name, version: q.version }) : t.notActionable;
}

async function main(): Promise<void> {
  const res = await api<CustomerQuote>(context, 'GET', path);
  if (res.ok) render(res.body);
  else app.replaceChildren(el('p', { class: 'error general', role: 'alert' }, res.status === 404 ? t.invalidLink : t.failed));
}

void main();
