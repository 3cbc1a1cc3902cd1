import type { SessionDocument } from '../projections/sessions.projection';
import type { Adjustment } from '../domain/session.events';
import { toStorefrontSession, type LivePricingSettings } from './session-reader';

const HASH = 'sha256:' + 'a'.repeat(64);
const base = { lineItems: [{ description: 'Window', quantity: 1, unitPrice: 500, total: 500, itemType: 'window' }], subtotal: 500 };
const partner = (subtotal: number, receivedAt: number, currency?: string): Adjustment => ({
  configHash: HASH,
  lineItems: [{ description: 'Window, all in', quantity: 1, unitPrice: subtotal, total: subtotal, itemType: 'window' }],
  subtotal,
  receivedAt,
  ...(currency && { currency }),
});

function session(overrides: Partial<SessionDocument>): SessionDocument {
  return {
    id: 'ses_1', organizationId: 'org_a', templateId: 'tpl_1', origin: 'storefront', locale: 'en', customerTokenHash: 'ab'.repeat(32),
    status: 'active', configuration: null, configHash: HASH, configuredAt: 1_000, basePricing: base, adjustments: [], submissionId: null,
    submittedCurrency: null, submittedWithLivePricing: true, autofillAnswer: null, createdAt: 500, lastActivityAt: 1_000, updatedAt: 1_000,
    ...overrides,
  };
}

const context = { now: 2_000, idleTtlMs: 3_600_000 };
const live = (overrides: Partial<LivePricingSettings> = {}): LivePricingSettings => ({ externalPricingEnabled: true, currency: 'EUR', asksPartner: true, pricingTimeoutMs: 10_000, ...overrides });
const shown = (document: SessionDocument, settings = live()) => {
  const { pricing, adjustments } = toStorefrontSession(document, context, settings);
  return { source: pricing.source, subtotal: pricing.subtotal, adjustments: adjustments?.subtotal ?? null };
};

describe('what the customer sees of a session (toStorefrontSession)', () => {
  describe('while configuring', () => {
    it('shows the partner\'s price for the current configuration, in the api-v1 shape (no currency)', () => {
      const view = toStorefrontSession(session({ adjustments: [partner(700, 1_500, 'EUR')] }), context, live());
      expect(view.pricing).toMatchObject({ source: 'external', subtotal: 700 });
      expect(Object.keys(view.adjustments!).sort()).toEqual(['configHash', 'lineItems', 'receivedAt', 'subtotal']);
    });

    it('shows the base price while live pricing is off', () => {
      expect(shown(session({ adjustments: [partner(700, 1_500, 'EUR')] }), live({ externalPricingEnabled: false }))).toEqual({ source: 'base', subtotal: 500, adjustments: null });
    });

    it('shows the base price when the partner priced in a currency the organization has left since', () => {
      expect(shown(session({ adjustments: [partner(700, 1_500, 'JPY')] }), live({ currency: 'USD' }))).toEqual({ source: 'base', subtotal: 500, adjustments: null });
    });

    it('shows a price recorded before currencies were, as before', () => {
      expect(shown(session({ adjustments: [partner(700, 1_500)] }), live({ currency: 'USD' }))).toEqual({ source: 'external', subtotal: 700, adjustments: 700 });
    });
  });

  describe('once submitted: what the submission recorded, whatever the settings are now', () => {
    const submitted = (overrides: Partial<SessionDocument>) => session({ status: 'submitted', submissionId: 'sub_1', submittedCurrency: 'EUR', ...overrides });

    it('submitted with live pricing off, a later answer for the configuration is not shown, though live pricing is on again', () => {
      expect(shown(submitted({ submittedWithLivePricing: false, adjustments: [partner(998, 3_000, 'EUR')] }))).toEqual({ source: 'base', subtotal: 500, adjustments: null });
    });

    it('submitted with live pricing off, an auto-fill the organization asked for since is shown, as it prices the submission', () => {
      const autofill = partner(1_234, 3_000, 'EUR');
      expect(shown(submitted({ submittedWithLivePricing: false, autofillAnswer: autofill, adjustments: [autofill] }))).toEqual({ source: 'external', subtotal: 1_234, adjustments: 1_234 });
    });

    it('submitted with live pricing off, the auto-fill\'s answer stays shown after a later answer to the configuration replaced it among the adjustments', () => {
      const autofill = partner(1_234, 3_000, 'EUR');
      expect(shown(submitted({ submittedWithLivePricing: false, autofillAnswer: autofill, adjustments: [partner(999, 4_000, 'EUR')] }))).toEqual({ source: 'external', subtotal: 1_234, adjustments: 1_234 });
    });

    it('submitted with live pricing on, the partner\'s price stays shown after live pricing is switched off', () => {
      expect(shown(submitted({ adjustments: [partner(700, 1_500, 'EUR')] }), live({ externalPricingEnabled: false }))).toEqual({ source: 'external', subtotal: 700, adjustments: 700 });
    });

    it('submitted in USD, a price rounded in JPY before the change is not shown', () => {
      expect(shown(submitted({ submittedCurrency: 'USD', adjustments: [partner(102, 1_500, 'JPY')] }), live({ currency: 'USD' }))).toEqual({ source: 'base', subtotal: 500, adjustments: null });
    });
  });
});
