import { CONFIGURATOR } from './configurator.messages';
import { api, el, field, fill, languageSwitch, moneyFormat, pageContext, quantityFormat, refocus, requestKeys, showErrors, unitPriceFormat } from './dom';
import { fieldErrorsOf, localizeFieldMessage, placeFor, type FieldError } from './field-messages';
import { formatSize, parseSizeInput, sizeInputValue, unitLabel, type UnitSystem } from './units';
import { VALIDATION } from './validation.messages';

/** How soon the page follows the session again after the service refused its stream (its `Retry-After` for too many streams). */
const REFOLLOW_MS = 15_000;

interface Size {
  minWidth: number;
  maxWidth: number;
  minHeight: number;
  maxHeight: number;
}
interface Storefront {
  organization: { name: string; slug: string; locale: string; unitSystem: UnitSystem; currency: string };
  templates: { id: string; name: string }[];
}
interface TemplateCatalog {
  template: { id: string; name: string; description?: string | null; constraints: Size };
  components: { id: string; name: string; constraints: Size }[];
  optionGroups: { id: string; name: string; scope: 'product' | 'component'; required: boolean; multiple: boolean }[];
  options: { id: string; name: string; optionGroup: string }[];
  materials: { id: string; name: string; side: 'inside' | 'outside' | 'both' }[];
  sections: string[];
}
interface LineItem {
  description: string;
  /** `component:c2:TT`, `option:c2:hr3`, … (base items; a partner may echo it) */
  itemKey?: string;
  quantity: number;
  unitPrice: number;
  total?: number;
}
interface Session {
  sessionId: string;
  status: 'active' | 'submitted' | 'expired';
  configHash: string | null;
  pricing: { source: 'base' | 'external'; lineItems: LineItem[]; subtotal: number; awaitingExternal: boolean };
}
interface Part {
  componentId: string;
  width: number | null;
  height: number | null;
  options: Set<string>;
  /** takes its share of the window width the other parts leave: it filled the window, or the width was shared evenly */
  fillsWidth: boolean;
  /** as tall as the window */
  followsHeight: boolean;
}

/** What the customer chose and typed, kept in sessionStorage so that a reload does not lose it. */
interface Draft {
  width: number | null;
  height: number | null;
  unitAmount: number | null;
  parts: { componentId: string; width: number | null; height: number | null; options: string[]; fillsWidth: boolean; followsHeight: boolean }[];
  options: string[];
  inside: string | null;
  outside: string | null;
  section: string | null;
  notes: string;
  customer: Record<string, string>;
}

const CUSTOMER_FIELDS = ['name', 'email', 'phone', 'companyName', 'address', 'postalCode', 'city', 'country'] as const;
/** How long a failed save waits before it is tried again: then every 10 s for as long as the page is open. */
const RETRY_DELAYS_MS = [1000, 2000, 5000, 10_000];
/** The message about the layout as a whole (e.g. parts wider than the window); it describes every part's width input. */
const LAYOUT_ERROR_ID = 'f-components-error';

const context = pageContext();
const t = CONFIGURATOR[context.locale];
const v = VALIDATION[context.locale];
const orgSlug = context.data.org ?? '';
const app = document.getElementById('app')!;
const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** What `use` does with sessionStorage, or null when the browser refuses it (storage off or full, a draft it cannot read). */
function inSessionStorage<T>(use: (storage: Storage) => T): T | null {
  try {
    return use(sessionStorage);
  } catch {
    return null;
  }
}

/**
 * The customer's choices per organization and template in sessionStorage: a language link or a
 * reload after an expired session starts a new session, which gets them back. The storage of one
 * tab, so it ends with the tab; a browser that refuses storage just does without.
 */
const drafts = {
  key: (templateId: string) => `configurator:${orgSlug}:${templateId}`,
  read: (templateId: string) => inSessionStorage((storage) => JSON.parse(storage.getItem(drafts.key(templateId)) ?? 'null') as Partial<Draft> | null),
  write: (templateId: string, draft: Draft) => inSessionStorage((storage) => storage.setItem(drafts.key(templateId), JSON.stringify(draft))),
  forget: (templateId: string) => inSessionStorage((storage) => storage.removeItem(drafts.key(templateId))),
};
/** The product last configured on this tab, for a language link to an address without one. */
const lastTemplate = {
  key: `configurator:${orgSlug}`,
  read: () => inSessionStorage((storage) => storage.getItem(lastTemplate.key)),
  write: (templateId: string) => inSessionStorage((storage) => storage.setItem(lastTemplate.key, templateId)),
};

/**
 * `details.submissionId` of a 409 (the session was submitted already, by an attempt whose answer
 * never arrived) or of a 503 `writeStored` (submitted, but the service is slow to show it).
 */
function submittedAs(body: unknown): string | null {
  const id = (body as { error?: { details?: { submissionId?: unknown } } } | null)?.error?.details?.submissionId;
  return typeof id === 'string' && id !== '' ? id : null;
}

let storefront: Storefront;
let unitSystem: UnitSystem = 'metric';
let money: Intl.NumberFormat;
/** unit prices: every decimal a partner's price may have (6) */
let unitPrice: Intl.NumberFormat;
/** quantities of the price lines, in the page's language (`5,2` in German, not `5.2`) */
const quantity = quantityFormat(context.locale);
const size = (mm: number) => formatSize(mm, unitSystem, context.locale);

/** Everything of one template's configuration session. */
class Configurator {
  private sessionId = '';
  private token = '';
  private stream: EventSource | null = null;
  private width: number | null;
  private height: number | null;
  private unitAmount: number | null = 1;
  private parts: Part[] = [];
  private options = new Set<string>();
  private inside: string | null = null;
  private outside: string | null = null;
  private section: string | null = null;
  private notes = '';
  /**
   * The details in the form: what the draft keeps and the submit sends. Input events keep it up to
   * date; the submit reads the form again for what the browser filled in without one.
   */
  private customer: Record<string, string> = {};

  private readonly errors = new Map<string, HTMLElement>();
  private readonly general = el('p', { class: 'error general', role: 'alert' });
  private readonly layout = el('div', { class: 'parts' });
  private readonly priceBody = el('tbody');
  private readonly subtotal = el('td', { class: 'n' });
  private readonly priceStatus = el('p', { class: 'price-status', role: 'status', 'aria-live': 'polite' });
  private readonly retryButton = el('button', { type: 'button', class: 'retry', hidden: true, onclick: () => this.retryNow() }, t.retry);
  private readonly outdatedNote = el('p', { class: 'price-outdated', hidden: true }, t.outdated);
  private readonly priceTable = el('table', {});
  private readonly submitButton = el('button', { type: 'submit', class: 'primary', 'aria-describedby': 'submit-error' }, t.submit) as HTMLButtonElement;
  /** Why the last submit sent nothing, next to the button: on a phone the price panel's status is far away. */
  private readonly submitError = el('p', { class: 'error', id: 'submit-error', role: 'alert', tabindex: -1 });

  /** the configHash of the last accepted save: stream updates for older configurations are stale */
  private expectedHash: string | null = null;
  /** hashes for which the partner's price was awaited: when the wait ends without it, that is the fallback */
  private readonly awaited = new Set<string>();
  private saveTimer: number | undefined;
  private saveSeq = 0;
  /** the last save succeeded and nothing changed since */
  private valid = false;
  /** saves that failed in a row (network, 409, 429, 5xx); each is retried, later and later */
  private failures = 0;
  private stopped = false;
  private followTimer: number | undefined;
  /**
   * The `Idempotency-Key` of the submit: the same for every attempt with the same configuration
   * and customer, so that a retry after an answer that got lost is answered with the first
   * submission instead of making another.
   */
  private readonly submitKey = requestKeys();
  private readonly online = () => {
    if (this.failures) this.retryNow();
  };

  constructor(private readonly catalog: TemplateCatalog, private readonly host: HTMLElement) {
    const c = catalog.template.constraints;
    this.width = clamp(1200, c.minWidth, c.maxWidth);
    this.height = clamp(1400, c.minHeight, c.maxHeight);
    const first = catalog.components[0];
    if (first) this.parts.push(this.newPart(first.id, this.width));
    this.options = this.defaultOptions('product');
    this.restore(drafts.read(catalog.template.id));
  }

  /** Takes back a draft of this template; what the catalog no longer has is left out (the API reports the rest). */
  private restore(draft: Partial<Draft> | null): void {
    if (!draft || typeof draft !== 'object') return;
    const whole = (value: unknown) => (typeof value === 'number' && Number.isInteger(value) ? value : null);
    const known = (ids: unknown) => new Set((Array.isArray(ids) ? ids : []).filter((id) => this.catalog.options.some((o) => o.id === id)) as string[]);
    const material = (id: unknown) => (this.catalog.materials.some((m) => m.id === id) ? (id as string) : null);
    this.width = whole(draft.width);
    this.height = whole(draft.height);
    this.unitAmount = whole(draft.unitAmount);
    const parts = (Array.isArray(draft.parts) ? draft.parts : [])
      .filter((p) => this.catalog.components.some((c) => c.id === p?.componentId))
      .map((p) => ({ componentId: p.componentId, width: whole(p.width), height: whole(p.height), options: known(p.options), fillsWidth: p.fillsWidth === true, followsHeight: p.followsHeight === true }));
    if (parts.length) this.parts = parts;
    this.options = known(draft.options);
    this.inside = material(draft.inside);
    this.outside = material(draft.outside);
    this.section = this.catalog.sections.includes(draft.section as string) ? (draft.section as string) : null;
    this.notes = typeof draft.notes === 'string' ? draft.notes : '';
    for (const key of CUSTOMER_FIELDS) if (typeof draft.customer?.[key] === 'string') this.customer[key] = draft.customer[key];
  }

  private keepDraft(): void {
    drafts.write(this.catalog.template.id, {
      width: this.width,
      height: this.height,
      unitAmount: this.unitAmount,
      parts: this.parts.map((p) => ({ ...p, options: [...p.options] })),
      options: [...this.options],
      inside: this.inside,
      outside: this.outside,
      section: this.section,
      notes: this.notes,
      customer: this.customer,
    });
  }

  async start(): Promise<void> {
    const seq = this.saveSeq;
    const started = await api<{ sessionId: string; customerToken: string; session: Session }>(context, 'POST', `${encodeURIComponent(orgSlug)}/sessions`, {
      body: { templateId: this.catalog.template.id, origin: 'storefront', locale: context.locale },
    });
    if (seq !== this.saveSeq) return; // stopped meanwhile
    if (!started.ok) {
      this.host.replaceChildren(el('p', { class: 'error general', role: 'alert' }, t.failed));
      return;
    }
    this.sessionId = started.body.sessionId;
    this.token = started.body.customerToken;
    this.render();
    this.follow();
    window.addEventListener('online', this.online);
    this.scheduleSave(0);
  }

  stop(): void {
    this.stopped = true;
    this.stream?.close();
    window.clearTimeout(this.followTimer);
    window.clearTimeout(this.saveTimer);
    window.removeEventListener('online', this.online);
    this.saveSeq++; // a save still in flight is answered into nothing
  }

  private newPart(componentId: string, room: number | null): Part {
    const component = this.catalog.components.find((c) => c.id === componentId)!;
    const k = component.constraints;
    const width = clamp(room ?? k.minWidth, k.minWidth, k.maxWidth);
    const height = clamp(this.height ?? k.maxHeight, k.minHeight, k.maxHeight);
    return { componentId, width, height, options: this.defaultOptions('component'), fillsWidth: width === this.width, followsHeight: height === this.height };
  }

  /** The first option of every required group, so that a fresh configuration is valid and priced at once. */
  private defaultOptions(scope: 'product' | 'component'): Set<string> {
    const chosen = new Set<string>();
    for (const group of this.catalog.optionGroups) {
      if (group.scope !== scope || !group.required) continue;
      const first = this.catalog.options.find((o) => o.optionGroup === group.id);
      if (first) chosen.add(first.id);
    }
    return chosen;
  }

  // ---- the form -------------------------------------------------------------------------------

  private render(): void {
    const c = this.catalog.template.constraints;
    const unit = unitLabel(unitSystem);
    const configForm = el(
      'form',
      { class: 'config', novalidate: true, 'aria-label': t.title, onsubmit: (e: Event) => e.preventDefault() },
      this.general,
      el(
        'fieldset',
        {},
        el('legend', {}, t.size),
        el(
          'div',
          { class: 'row' },
          this.sizeField(fill(t.width, { unit }), 'width', () => this.width, c.minWidth, c.maxWidth, (mm) => this.changeWidth(mm)),
          this.sizeField(fill(t.height, { unit }), 'height', () => this.height, c.minHeight, c.maxHeight, (mm) => this.changeHeight(mm)),
          field(
            t.quantity,
            el('input', {
              type: 'number', min: 1, max: 999, step: 1, inputmode: 'numeric', value: this.unitAmount ?? '',
              oninput: (e: Event) => {
                const text = (e.target as HTMLInputElement).value;
                this.unitAmount = /^\d+$/.test(text) ? Number(text) : null;
                this.scheduleSave();
              },
            }),
            { path: 'unitAmount', errors: this.errors, hint: fill(t.sizeHint, { min: 1, max: 999 }) },
          ),
        ),
      ),
      el('fieldset', {}, el('legend', {}, t.layout), el('p', { class: 'hint' }, t.layoutHint), this.layout),
      this.productOptions(),
      this.colours(),
      this.extras(),
    );
    this.renderLayout();

    const price = el(
      'aside',
      { class: 'price', 'aria-labelledby': 'price-title' },
      el('h2', { id: 'price-title' }, t.price),
      this.priceStatus,
      this.retryButton,
      this.outdatedNote,
      this.priceTable,
    );
    this.priceTable.replaceChildren(
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t.item), el('th', { scope: 'col', class: 'n' }, t.amount))),
      this.priceBody,
      el('tfoot', {}, el('tr', {}, el('th', { scope: 'row' }, t.subtotal), this.subtotal)),
    );
    this.host.replaceChildren(configForm, price, this.customerForm());
  }

  /** A size input; `current` is its value in mm, which a re-typed shown value keeps (units.ts). */
  private sizeField(
    label: string,
    path: string,
    current: () => number | null,
    min: number,
    max: number,
    change: (mm: number | null) => void,
    describedBy?: string,
  ): HTMLElement {
    // The size the field was drawn with: typed back, key by key, it keeps its millimetres (the
    // value before the last key is no guide then: `20.` on the way to `20.1` reads as nothing).
    const drawn = current();
    const input = el('input', {
      type: 'text', inputmode: 'decimal', autocomplete: 'off', required: true, 'data-focus': path,
      value: drawn === null ? '' : sizeInputValue(drawn, unitSystem, context.locale),
      oninput: (e: Event) => {
        const text = (e.target as HTMLInputElement).value;
        const reading = { limits: { min, max }, locale: context.locale };
        const typedBack = drawn !== null && parseSizeInput(text, unitSystem, { ...reading, current: drawn }) === drawn;
        change(typedBack ? drawn : parseSizeInput(text, unitSystem, { ...reading, current: current() }));
        this.scheduleSave();
      },
    });
    return field(label, input, { path, errors: this.errors, describedBy, hint: fill(t.sizeHint, { min: size(min), max: size(max) }) });
  }

  /**
   * Parts that fill the window share the width the other parts leave when the window width
   * changes, also after the field was emptied on the way to the new width.
   */
  private changeWidth(mm: number | null): void {
    this.width = mm;
    const filling = this.parts.filter((p) => p.fillsWidth);
    const others = this.parts.filter((p) => !p.fillsWidth).map((p) => p.width);
    if (mm === null || !filling.length || others.includes(null)) return;
    const room = mm - sum(others as number[]);
    const share = Math.floor(room / filling.length);
    filling.forEach((p, i) => (p.width = i === filling.length - 1 ? room - share * i : share));
    this.renderLayout();
  }

  private changeHeight(mm: number | null): void {
    this.height = mm;
    if (mm === null) return;
    const following = this.parts.filter((p) => p.followsHeight);
    following.forEach((p) => (p.height = mm));
    if (following.length) this.renderLayout();
  }

  private renderLayout(): void {
    for (const path of [...this.errors.keys()]) if (path.startsWith('components[')) this.errors.delete(path);
    const unit = unitLabel(unitSystem);
    const cards = this.parts.map((part, i) => {
      const n = i + 1;
      const path = `components[${i}]`;
      const component = this.catalog.components.find((c) => c.id === part.componentId)!;
      const k = component.constraints;
      const type = el(
        'select',
        {
          'data-focus': `${path}.componentId`,
          onchange: (e: Event) => {
            const changed = this.newPart((e.target as HTMLSelectElement).value, part.width);
            this.parts[i] = { ...changed, options: part.options, fillsWidth: part.fillsWidth && changed.width === part.width };
            this.renderLayout();
            this.scheduleSave();
          },
        },
        ...this.catalog.components.map((c) => el('option', { value: c.id, selected: c.id === part.componentId }, c.name)),
      );
      const partErrors = el('p', { class: 'error', 'aria-live': 'polite' });
      this.errors.set(path, partErrors);
      return el(
        'fieldset',
        { class: 'part' },
        el('legend', {}, fill(t.component, { n })),
        field(t.componentType, type, { path: `${path}.componentId`, errors: this.errors }),
        el(
          'div',
          { class: 'row' },
          this.sizeField(
            fill(t.width, { unit }),
            `${path}.width`,
            () => part.width,
            k.minWidth,
            k.maxWidth,
            (mm) => {
              part.width = mm;
              part.fillsWidth = mm !== null && mm === this.width;
            },
            LAYOUT_ERROR_ID,
          ),
          this.sizeField(fill(t.height, { unit }), `${path}.height`, () => part.height, k.minHeight, k.maxHeight, (mm) => {
            part.height = mm;
            part.followsHeight = mm !== null && mm === this.height;
          }),
        ),
        this.optionGroups('component', part.options, `${path}.options`, `p${n}`),
        partErrors,
        this.parts.length > 1
          ? el(
              'button',
              {
                type: 'button', class: 'link', 'data-focus': `${path}.remove`,
                onclick: () => {
                  this.parts.splice(i, 1);
                  this.renderLayout();
                  this.scheduleSave();
                },
              },
              fill(t.removeComponent, { n }),
            )
          : null,
      );
    });
    const layoutErrors = el('p', { class: 'error', id: LAYOUT_ERROR_ID, 'aria-live': 'polite' });
    this.errors.set('components', layoutErrors);
    const actions = el(
      'div',
      { class: 'actions' },
      this.catalog.components.length
        ? el('button', {
            type: 'button', 'data-focus': 'components.add',
            onclick: () => {
              const first = this.catalog.components[0];
              const used = this.parts.reduce((sum, p) => sum + (p.width ?? 0), 0);
              const room = this.width === null ? null : this.width - used;
              this.parts.push(this.newPart(first.id, room));
              if (this.width !== null && room !== null && room < first.constraints.minWidth) {
                // No room beside the parts (they fill the window): all of them share it, the new one too.
                this.parts.forEach((p) => (p.fillsWidth = true));
                this.changeWidth(this.width);
              } else this.renderLayout();
              this.scheduleSave();
              const parts = this.layout.querySelectorAll('fieldset.part');
              (parts[parts.length - 1]?.querySelector('select') as HTMLElement | null)?.focus();
            },
          }, t.addComponent)
        : null,
      this.parts.length > 1
        ? el('button', {
            type: 'button', 'data-focus': 'components.divide',
            onclick: () => {
              if (this.width === null) return;
              // Every part fills the window, so they share all of it.
              this.parts.forEach((p) => (p.fillsWidth = true));
              this.changeWidth(this.width);
              this.scheduleSave();
            },
          }, t.divideEvenly)
        : null,
    );
    // Drawn anew, the control that had the focus is a new element: the focus goes to its
    // successor (the same place), or to the actions when it is gone (a removed part's button).
    const focused = focusKeyIn(this.layout);
    this.layout.replaceChildren(...cards, layoutErrors, actions);
    if (focused !== null) (withFocusKey(this.layout, focused) ?? (actions.querySelector('button') as HTMLElement | null))?.focus();
  }

  /** The option groups of one scope: radio buttons for one choice, check boxes for several. */
  private optionGroups(scope: 'product' | 'component', chosen: Set<string>, path: string, prefix: string): HTMLElement {
    const box = el('div', { class: 'option-groups' });
    for (const group of this.catalog.optionGroups.filter((g) => g.scope === scope)) {
      const options = this.catalog.options.filter((o) => o.optionGroup === group.id);
      const name = `${prefix}-${group.id}`;
      const choices = options.map((option) => {
        const id = `${name}-${option.id}`;
        const input = el('input', {
          type: group.multiple ? 'checkbox' : 'radio', name, id, value: option.id, checked: chosen.has(option.id),
          onchange: (e: Event) => {
            const on = (e.target as HTMLInputElement).checked;
            if (!group.multiple) options.forEach((o) => chosen.delete(o.id));
            if (on) chosen.add(option.id);
            else chosen.delete(option.id);
            this.scheduleSave();
          },
        });
        return el('div', { class: 'choice' }, input, el('label', { for: id }, option.name));
      });
      if (!group.multiple && !group.required) {
        const id = `${name}-none`;
        choices.unshift(
          el(
            'div',
            { class: 'choice' },
            el('input', {
              type: 'radio', name, id, value: '', checked: !options.some((o) => chosen.has(o.id)),
              onchange: () => {
                options.forEach((o) => chosen.delete(o.id));
                this.scheduleSave();
              },
            }),
            el('label', { for: id }, t.noColour),
          ),
        );
      }
      box.append(el('fieldset', { class: 'group' }, el('legend', {}, group.name + (group.required ? ' *' : '')), ...choices));
    }
    const error = el('p', { class: 'error', 'aria-live': 'polite' });
    this.errors.set(path, error);
    box.append(error);
    return box;
  }

  private productOptions(): HTMLElement | null {
    if (!this.catalog.optionGroups.some((g) => g.scope === 'product')) return null;
    return el('fieldset', {}, el('legend', {}, t.options), this.optionGroups('product', this.options, 'options', 'product'));
  }

  private colours(): HTMLElement | null {
    if (!this.catalog.materials.length) return null;
    const select = (side: 'inside' | 'outside', chosen: string | null, set: (id: string | null) => void) =>
      el(
        'select',
        { onchange: (e: Event) => { set((e.target as HTMLSelectElement).value || null); this.scheduleSave(); } },
        el('option', { value: '' }, t.noColour),
        ...this.catalog.materials.filter((m) => m.side === side || m.side === 'both').map((m) => el('option', { value: m.id, selected: m.id === chosen }, m.name)),
      );
    return el(
      'fieldset',
      {},
      el('legend', {}, t.colours),
      el(
        'div',
        { class: 'row' },
        field(t.inside, select('inside', this.inside, (id) => (this.inside = id)), { path: 'insideColorId', errors: this.errors }),
        field(t.outside, select('outside', this.outside, (id) => (this.outside = id)), { path: 'outsideColorId', errors: this.errors }),
      ),
    );
  }

  private extras(): HTMLElement {
    const sections = this.catalog.sections.length
      ? field(
          t.section,
          el(
            'select',
            { onchange: (e: Event) => { this.section = (e.target as HTMLSelectElement).value || null; this.scheduleSave(); } },
            el('option', { value: '' }, t.noSection),
            ...this.catalog.sections.map((s) => el('option', { value: s, selected: s === this.section }, s)),
          ),
          { path: 'section', errors: this.errors },
        )
      : null;
    const notes = field(
      t.notes,
      el('textarea', { rows: 3, maxlength: 2000, oninput: (e: Event) => { this.notes = (e.target as HTMLTextAreaElement).value; this.scheduleSave(); } }, this.notes),
      { path: 'notes', errors: this.errors },
    );
    return el('fieldset', {}, sections, notes);
  }

  private customerForm(): HTMLElement {
    const input = (path: string, label: string, attrs: Record<string, string | boolean>) =>
      field(label, el('input', { name: path, value: this.customer[path] ?? '', ...attrs }), { path: `customer.${path}`, errors: this.errors });
    return el(
      'form',
      {
        class: 'customer', novalidate: true, 'aria-labelledby': 'customer-title',
        onsubmit: (e: Event) => { e.preventDefault(); void this.submit(e.currentTarget as HTMLFormElement); },
        oninput: (e: Event) => {
          const input = e.target as HTMLInputElement;
          this.customer[input.name] = input.value;
          this.submitError.textContent = '';
          this.keepDraft();
        },
      },
      el('h2', { id: 'customer-title' }, t.yourDetails),
      el(
        'div',
        { class: 'row' },
        input('name', t.name, { autocomplete: 'name', required: true, maxlength: '200' }),
        input('email', t.email, { type: 'email', autocomplete: 'email', required: true }),
      ),
      el('div', { class: 'row' }, input('phone', t.phone, { type: 'tel', autocomplete: 'tel' }), input('companyName', t.company, { autocomplete: 'organization' })),
      input('address', t.address, { autocomplete: 'street-address' }),
      el(
        'div',
        { class: 'row' },
        input('postalCode', t.postalCode, { autocomplete: 'postal-code' }),
        input('city', t.city, { autocomplete: 'address-level2' }),
        input('country', t.country, { autocomplete: 'country-name' }),
      ),
      this.submitButton,
      this.submitError,
    );
  }

  // ---- saving and the live price --------------------------------------------------------------

  private configuration() {
    return {
      width: this.width,
      height: this.height,
      unitAmount: this.unitAmount,
      components: this.parts.map((p, i) => ({ id: `c${i + 1}`, componentId: p.componentId, width: p.width, height: p.height, options: [...p.options] })),
      options: [...this.options],
      insideColorId: this.inside,
      outsideColorId: this.outside,
      notes: this.notes,
      section: this.section,
    };
  }

  /** A change: the price shown is for the previous configuration until the save of this one succeeds. */
  private scheduleSave(delay = 350): void {
    window.clearTimeout(this.saveTimer);
    this.valid = false;
    this.submitError.textContent = ''; // it was about the configuration before this change
    this.keepDraft();
    this.setOutdated(true);
    this.setStatus(t.calculating, 'busy');
    this.saveTimer = window.setTimeout(() => void this.save(), delay);
  }

  private retryNow(): void {
    window.clearTimeout(this.saveTimer);
    this.setStatus(t.calculating, 'busy');
    void this.save();
  }

  private async save(): Promise<void> {
    const configuration = this.configuration();
    // A size that is not a number cannot be sent as one; the API would only say "must be a number" too.
    const unreadable: FieldError[] = [];
    if (configuration.width === null) unreadable.push({ path: 'width', message: 'must be a number' });
    if (configuration.height === null) unreadable.push({ path: 'height', message: 'must be a number' });
    if (configuration.unitAmount === null) unreadable.push({ path: 'unitAmount', message: 'must be a whole number' });
    configuration.components.forEach((c, i) => {
      if (c.width === null) unreadable.push({ path: `components[${i}].width`, message: 'must be a number' });
      if (c.height === null) unreadable.push({ path: `components[${i}].height`, message: 'must be a number' });
    });
    if (unreadable.length) {
      this.invalid(unreadable);
      return;
    }
    const seq = ++this.saveSeq;
    const res = await api<Session>(context, 'PUT', `sessions/${this.sessionId}/configuration`, { body: configuration, token: this.token });
    if (seq !== this.saveSeq) return;
    if (res.ok) {
      this.valid = true;
      this.failures = 0;
      this.submitError.textContent = ''; // what stopped a submit is saved now
      this.expectedHash = res.body.configHash;
      this.showFieldErrors([]);
      this.renderSession(res.body);
    } else if (res.status === 422) {
      this.failures = 0;
      this.invalid(fieldErrorsOf(res.body));
    } else if (res.status === 410) {
      this.expire();
    } else if (res.status === 409 && submittedAs(res.body)) {
      // Submitted by an attempt whose answer was lost; what changed since is not in it, so no summary.
      this.confirm(submittedAs(res.body)!, false);
    } else {
      // Offline, a conflict, the rate limit or a server error: all pass, so the save is tried again.
      const delay = RETRY_DELAYS_MS[Math.min(this.failures, RETRY_DELAYS_MS.length - 1)];
      this.failures++;
      this.setStatus(t.saveFailed, 'error', true);
      this.saveTimer = window.setTimeout(() => void this.save(), delay);
    }
  }

  private invalid(errors: FieldError[]): void {
    this.valid = false;
    this.showFieldErrors(errors);
    this.priceBody.replaceChildren();
    this.subtotal.textContent = '';
    this.setOutdated(false);
    this.setStatus(t.invalid, 'error');
  }

  /** Dims the price shown and says it is not up to date (nothing to say while none is shown). */
  private setOutdated(outdated: boolean): void {
    const shown = outdated && this.priceBody.childElementCount > 0;
    this.priceTable.classList.toggle('outdated', shown);
    this.outdatedNote.hidden = !shown;
  }

  private showFieldErrors(errors: FieldError[]): void {
    const messages = new Map<string, string[]>();
    const unplaced: string[] = [];
    for (const error of errors) {
      const text = localizeFieldMessage(error.message, v, size);
      const place = placeFor(error.path, (p) => this.errors.has(p));
      if (place) messages.set(place, [...(messages.get(place) ?? []), text]);
      else unplaced.push(text);
    }
    showErrors(this.errors, messages);
    this.general.textContent = unplaced.join(' ');
  }

  /**
   * Live view of the session: the price as the partner's answer or the wait for it ends. A stream
   * the service refuses for good (204 for an expired session, 429 when the session has too many
   * open) is not reconnected by EventSource: the page then reads the session once, which shows an
   * expiry, and follows again a little later.
   */
  private follow(): void {
    const url = `${context.root}storefront/v1/sessions/${encodeURIComponent(this.sessionId)}/stream?token=${encodeURIComponent(this.token)}`;
    const stream = new EventSource(url);
    this.stream = stream;
    stream.addEventListener('session', (event) => this.renderSession(JSON.parse((event as MessageEvent<string>).data) as Session));
    stream.addEventListener('error', () => {
      if (stream.readyState !== EventSource.CLOSED || this.stopped || this.stream !== stream) return;
      void this.readSession();
      window.clearTimeout(this.followTimer);
      this.followTimer = window.setTimeout(() => {
        if (!this.stopped && this.stream === stream) this.follow();
      }, REFOLLOW_MS);
    });
  }

  private async readSession(): Promise<void> {
    const res = await api<Session>(context, 'GET', `sessions/${this.sessionId}`, { token: this.token });
    if (res.ok && res.body && !this.stopped) this.renderSession(res.body);
  }

  private renderSession(session: Session): void {
    if (session.status === 'expired') return this.expire();
    if (!this.valid || !session.configHash || session.configHash !== this.expectedHash) return;
    const { pricing } = session;
    this.priceBody.replaceChildren(
      ...pricing.lineItems.map((item) =>
        el(
          'tr',
          {},
          el('td', {}, this.describe(item)),
          el('td', { class: 'n' }, money.format(item.total ?? item.quantity * item.unitPrice)),
        ),
      ),
    );
    this.subtotal.textContent = money.format(pricing.subtotal);
    this.setOutdated(false);
    const org = storefront.organization.name;
    // The status is the live region: it says the price too, so a screen reader hears the amount, not only that it changed.
    const spoken = `${t.subtotal}: ${this.subtotal.textContent}`;
    if (pricing.source === 'external') this.setStatus(fill(t.external, { org }), 'external', false, spoken);
    else if (pricing.awaitingExternal) {
      this.awaited.add(session.configHash);
      this.setStatus(fill(t.waiting, { org }), 'busy', false, spoken);
    } else if (this.awaited.has(session.configHash)) this.setStatus(fill(t.fallback, { org }), 'fallback', false, spoken);
    else this.setStatus(t.base, 'base', false, spoken);
  }

  /** With several parts, which part an item is for (the instance ids are `c1`, `c2`, … in layout order). */
  private describe(item: LineItem): string {
    const part = this.parts.length > 1 ? item.itemKey?.match(/^(?:component|option):c(\d+):/) : null;
    const text = part ? `${fill(t.component, { n: part[1] })} · ${item.description}` : item.description;
    return item.quantity === 1 ? text : `${text} (${quantity.format(item.quantity)} × ${unitPrice.format(item.unitPrice)})`;
  }

  /** The state of the price; `retry` offers to try a failed save at once; `spoken` is for screen readers only (the table shows it). */
  private setStatus(text: string, kind: 'busy' | 'external' | 'base' | 'fallback' | 'error', retry = false, spoken: string | null = null): void {
    this.priceStatus.replaceChildren(text, spoken ? el('span', { class: 'visually-hidden' }, ` ${spoken}`) : '');
    this.priceStatus.dataset.state = kind;
    this.retryButton.hidden = !retry;
  }

  /** The choices stay in the draft, so the reload the page offers continues with them in a new session. */
  private expire(): void {
    this.stop();
    // In the form, or on the page: a pressed submit button is disabled while it sends, which drops its focus.
    const focused = document.activeElement === null || document.activeElement === document.body || this.host.contains(document.activeElement);
    const resume = el('a', { href: location.pathname + location.search }, t.continue);
    this.host.replaceChildren(el('p', { class: 'error general', role: 'alert' }, t.expired, ' ', resume));
    // A keyboard user was in the form that is gone: the way on, not the top of the page.
    if (focused) resume.focus();
  }

  private async submit(form: HTMLFormElement): Promise<void> {
    this.submitError.textContent = '';
    // Autofill and the form restored by the back button fire no input event: what the form shows counts.
    const shown = new FormData(form);
    for (const key of CUSTOMER_FIELDS) this.customer[key] = String(shown.get(key) ?? '');
    this.keepDraft();
    // Busy from the press on: the save of what was typed last may take a while too.
    this.submitButton.disabled = true;
    this.submitButton.textContent = t.submitting;
    try {
      await this.send();
    } finally {
      this.submitButton.disabled = false;
      this.submitButton.textContent = t.submit;
      // Submitted or expired, the form is gone and the focus is where that put it.
      if (!this.stopped) refocus(this.submitButton);
    }
  }

  private async send(): Promise<void> {
    // Whatever was typed last is saved (and checked) before the submit, unless that save is done.
    if (!this.valid) {
      window.clearTimeout(this.saveTimer);
      await this.save();
    }
    if (this.stopped) return; // submitted before after all, or expired
    if (!this.valid) return this.notSent();
    const customer: Record<string, string | null> = {};
    for (const key of CUSTOMER_FIELDS) {
      const value = (this.customer[key] ?? '').trim();
      customer[key] = value === '' ? (key === 'name' || key === 'email' ? '' : null) : value;
    }
    const res = await api<{ submissionId: string }>(context, 'POST', `sessions/${this.sessionId}/submit`, {
      body: { customer },
      token: this.token,
      headers: { 'Idempotency-Key': this.submitKey([this.expectedHash, customer]) },
    });
    if (res.ok) return this.confirm(res.body.submissionId);
    // An attempt with another key (other details) after one whose answer was lost: that one counts.
    if ((res.status === 409 || res.status === 503) && submittedAs(res.body)) return this.confirm(submittedAs(res.body)!);
    if (res.status === 422) {
      this.showFieldErrors(fieldErrorsOf(res.body));
      this.notSent();
    } else if (res.status === 410) this.expire();
    else this.submitError.textContent = t.failed; // the focus stays on the button, to try again
  }

  /**
   * A submit that sent nothing: says why next to the button and takes the focus to the first field
   * in error, or to that message when no field is (a save that failed, a message above the form).
   */
  private notSent(): void {
    const target = this.firstInError();
    this.submitError.textContent = target || this.general.textContent ? t.notSentInvalid : t.notSentUnsaved;
    (target ?? this.submitError).focus();
  }

  /**
   * The input of the first error message shown, in page order: the input the message describes,
   * else the first one beside it (a message about a group of options or a whole part).
   */
  private firstInError(): HTMLElement | null {
    const shown = new Set([...this.errors.values()].filter((slot) => slot.textContent));
    const slot = [...this.host.querySelectorAll<HTMLElement>('.error')].find((p) => shown.has(p));
    if (!slot) return null;
    const described = slot.id ? this.host.querySelector<HTMLElement>(`[aria-describedby~="${slot.id}"]`) : null;
    return described ?? slot.parentElement?.querySelector<HTMLElement>('input, select, textarea') ?? null;
  }

  /** `summary`: the configuration on screen is the one submitted. */
  private confirm(submissionId: string, summary = true): void {
    this.stop();
    drafts.forget(this.catalog.template.id);
    const heading = el('h2', { id: 'thanks', tabindex: -1 }, t.thanks);
    const described = [this.catalog.template.name, `${size(this.width!)} × ${size(this.height!)}`, this.subtotal.textContent].filter(Boolean).join(' · ');
    document.getElementById('product')?.remove();
    this.host.replaceChildren(
      el(
        'section',
        { class: 'confirmation', 'aria-labelledby': 'thanks' },
        heading,
        summary ? el('p', {}, described) : null,
        el('p', {}, fill(t.thanksBody, { org: storefront.organization.name })),
        el('p', { class: 'muted' }, fill(t.reference, { id: submissionId })),
        el('p', {}, el('a', { href: location.pathname + location.search }, t.again)),
      ),
    );
    heading.focus();
  }
}

async function main(): Promise<void> {
  const loaded = await api<Storefront>(context, 'GET', encodeURIComponent(orgSlug));
  if (!loaded.ok) {
    app.replaceChildren(el('p', { class: 'error general', role: 'alert' }, loaded.status === 404 ? t.unavailable : t.failed));
    return;
  }
  storefront = loaded.body;
  unitSystem = storefront.organization.unitSystem === 'imperial' ? 'imperial' : 'metric';
  money = moneyFormat(context.locale, storefront.organization.currency);
  unitPrice = unitPriceFormat(context.locale, storefront.organization.currency);
  document.title = `${t.title} · ${storefront.organization.name}`;

  const header = el(
    'header',
    { class: 'top' },
    el('div', {}, el('p', { class: 'org' }, storefront.organization.name), el('h1', {}, t.title)),
    languageSwitch(context.locale, t.languages),
  );
  const body = el('div', { class: 'configurator' });
  const templates = storefront.templates;
  if (!templates.length) {
    app.replaceChildren(header, el('p', {}, t.noProducts));
    return;
  }
  // The address's product, else the one last configured on this tab (a language link keeps it).
  const remembered = lastTemplate.read();
  const wanted = context.data.template || (templates.some((tpl) => tpl.id === remembered) ? remembered : null);
  let current: Configurator | null = null;
  let choosing = 0;
  const choose = async (templateId: string) => {
    const mine = ++choosing;
    current?.stop();
    current = null;
    const catalog = await api<TemplateCatalog>(context, 'GET', `${encodeURIComponent(orgSlug)}/templates/${encodeURIComponent(templateId)}`);
    if (mine !== choosing) return; // the customer has picked another product meanwhile
    if (!catalog.ok) {
      body.replaceChildren(el('p', { class: 'error general', role: 'alert' }, catalog.status === 404 ? t.unavailable : t.failed));
      return;
    }
    lastTemplate.write(templateId);
    current = new Configurator(catalog.body, body);
    await current.start();
  };
  const unknown = !!wanted && !templates.some((tpl) => tpl.id === wanted);
  const picker =
    templates.length > 1 || unknown
      ? el(
          'div',
          { class: 'field product', id: 'product' },
          el('label', { for: 'template' }, t.product),
          el(
            'select',
            { id: 'template', onchange: (e: Event) => void choose((e.target as HTMLSelectElement).value) },
            // A product that does not exist selects none, so that picking any, the only one too, is a change.
            unknown ? el('option', { value: '', disabled: true, selected: true }, t.chooseProduct) : null,
            ...templates.map((tpl) => el('option', { value: tpl.id, selected: tpl.id === wanted }, tpl.name)),
          ),
        )
      : el('p', { class: 'product', id: 'product' }, templates[0].name);
  app.replaceChildren(header, picker, body);
  await choose(wanted || templates[0].id);
}

void main();

/** The key of the control inside `root` that has the focus (`data-focus`, else its id); null when none has. */
function focusKeyIn(root: HTMLElement): string | null {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !root.contains(active)) return null;
  return active.dataset.focus ?? (active.id || null);
}

/** The control inside `root` with that key. */
function withFocusKey(root: HTMLElement, key: string): HTMLElement | null {
  return [...root.querySelectorAll<HTMLElement>('[data-focus], [id]')].find((node) => (node.dataset.focus ?? node.id) === key) ?? null;
}
