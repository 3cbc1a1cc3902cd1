/** The customer object embedded in submissions (api-v1): every field may be null. */
export interface SubmissionCustomer {
  name: string | null;
  email: string | null;
  phone: string | null;
  companyName: string | null;
  address: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
}

export interface PricedLineItem {
  description: string;
  quantity: number;
  unitPrice: number;
  total: number;
  itemType: string;
  itemKey?: string;
  sortOffset?: number;
  externalRef?: string;
}

export interface PricingBreakdown {
  lineItems: PricedLineItem[];
  subtotal: number;
}

/** A live-pricing adjustment frozen onto a submission (api-v1 `externalPricing`). */
export interface FrozenPricing extends PricingBreakdown {
  configHash: string;
  receivedAt: number;
}
