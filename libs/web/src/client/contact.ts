import { CONTACT } from './contact.messages';
import { api, el, field, fill, languageSwitch, pageContext, refocus, requestKeys, showErrors } from './dom';
import { fieldErrorsOf, localizeFieldMessage, placeFor } from './field-messages';
import { formatSize } from './units';
import { VALIDATION } from './validation.messages';

const context = pageContext();
const t = CONTACT[context.locale];
const v = VALIDATION[context.locale];
const orgSlug = context.data.org ?? '';
const app = document.getElementById('app')!;

function form(org: string): HTMLElement {
  const errors = new Map<string, HTMLElement>();
  /**
   * The `Idempotency-Key` of the enquiry: the same for every attempt with the same text, so a
   * retry after an answer that was lost is answered with the lead it made, not a second one.
   */
  const sendKey = requestKeys();
  const general = el('p', { class: 'error general', role: 'alert' });
  const send = el('button', { type: 'submit', class: 'primary' }, t.send) as HTMLButtonElement;
  const node = el(
    'form',
    {
      class: 'contact', novalidate: true, 'aria-labelledby': 'contact-title',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        const data = new FormData(node as HTMLFormElement);
        const text = (key: string) => String(data.get(key) ?? '').trim();
        const body = { name: text('name'), email: text('email'), phone: text('phone') || null, message: text('message') };
        send.disabled = true;
        send.textContent = t.sending;
        const res = await api<{ id: string }>(context, 'POST', `${encodeURIComponent(orgSlug)}/leads`, { body, headers: { 'Idempotency-Key': sendKey(body) } });
        send.disabled = false;
        send.textContent = t.send;
        refocus(send);
        if (res.ok) return thanks(org);
        const messages = new Map<string, string[]>();
        const unplaced: string[] = [];
        for (const error of fieldErrorsOf(res.body)) {
          const message = localizeFieldMessage(error.message, v, (mm) => formatSize(mm, 'metric', context.locale));
          const place = placeFor(error.path, (p) => errors.has(p));
          if (place) messages.set(place, [...(messages.get(place) ?? []), message]);
          else unplaced.push(message);
        }
        showErrors(errors, messages);
        general.textContent = res.status === 422 ? unplaced.join(' ') : t.failed;
        (node.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus();
      },
    },
    general,
    el(
      'div',
      { class: 'row' },
      field(t.name, el('input', { name: 'name', autocomplete: 'name', required: true, maxlength: 200 }), { path: 'name', errors }),
      field(t.email, el('input', { name: 'email', type: 'email', autocomplete: 'email', required: true }), { path: 'email', errors }),
    ),
    field(t.phone, el('input', { name: 'phone', type: 'tel', autocomplete: 'tel', maxlength: 50 }), { path: 'phone', errors }),
    field(t.message, el('textarea', { name: 'message', rows: 6, required: true, maxlength: 5000 }), { path: 'message', errors }),
    send,
  );
  return node;
}

function thanks(org: string): void {
  const heading = el('h2', { tabindex: -1 }, t.thanks);
  document.getElementById('contact-body')!.replaceChildren(
    el('section', { class: 'confirmation' }, heading, el('p', {}, fill(t.thanksBody, { org })), el('p', {}, el('a', { href: location.pathname + location.search }, t.again))),
  );
  heading.focus();
}

async function main(): Promise<void> {
  const res = await api<{ organization: { name: string } }>(context, 'GET', encodeURIComponent(orgSlug));
  if (!res.ok) {
    app.replaceChildren(el('p', { class: 'error general', role: 'alert' }, res.status === 404 ? t.unknown : t.failed));
    return;
  }
  const org = res.body.organization.name;
  document.title = fill(t.title, { org });
  app.replaceChildren(
    el('header', { class: 'top' }, el('div', {}, el('p', { class: 'org' }, org), el('h1', { id: 'contact-title' }, fill(t.title, { org }))), languageSwitch(context.locale, t.languages)),
    el('div', { id: 'contact-body' }, el('p', {}, t.intro), form(org)),
  );
}

void main();
