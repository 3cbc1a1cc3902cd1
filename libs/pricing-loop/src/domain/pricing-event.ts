import type { PricingContext } from '@lib/sessions';
import type { PricingBreakdown } from '@lib/submissions';
import type { Configuration } from '@lib/templates';

export const PRICING_CALCULATED = 'pricing.calculated';

/**
 * `data` of `pricing.calculated` as drafted from the domain event. The `callback` block with the
 * capability URL is added to each attempt by the finalizer and never stored.
 */
export interface PricingEventData {
  context: PricingContext;
  configHash: string;
  basePricing: PricingBreakdown;
  configuration: Configuration;
  template: { id: string };
  /** the session the token is bound to (for `autofill`, the session the submission came from) */
  session: { id: string };
  /** contexts `submission` and `autofill` */
  submission?: { id: string };
}

export interface PricingCallback {
  /** PUT target for adjustments: `{PUBLIC_BASE_URL}/api/v1/configuration-sessions/{token}/adjustments` */
  url: string;
  /** the customer-facing wait (the organization's pricingTimeoutMs) */
  timeoutMs: number;
  /**
   * The delivery generation the URL was minted for (= X-Service-Delivery-Generation), inside the
   * signed body: a redelivery has the same delivery id, a higher generation and a new URL, and
   * the URL of a lower generation answers 401.
   */
  generation: number;
}

export function callbackUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/api/v1/configuration-sessions/${token}/adjustments`;
}
