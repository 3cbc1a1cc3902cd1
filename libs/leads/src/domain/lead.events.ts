/** Lifecycle order of a lead (api-v1): a lead only ever moves forward. */
export const LEAD_STATUSES = ['new', 'contacted', 'closed'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** What the public contact form submits, already validated and reduced to plain text. */
export interface LeadEnquiry {
  name: string;
  email: string;
  phone: string | null;
  message: string;
}

export type LeadEvent =
  | {
      type: 'lead.v1.created';
      /** everything the `lead.created` webhook needs (decisions §9), so the outbox reads nothing else */
      data: { organizationId: string; leadId: string; name: string; email: string; phone: string | null; message: string; createdAt: number };
    }
  | {
      type: 'lead.v1.statusChanged';
      data: { organizationId: string; leadId: string; from: LeadStatus; to: LeadStatus; at: number };
    };

export const LEAD_STREAM = 'lead-';
export const leadStream = (leadId: string) => `${LEAD_STREAM}${leadId}`;

const LEAD_ID = /^lead_[0-9A-Za-z]{1,64}$/;

/** Whether a string can be a lead id at all; anything else is simply not found. */
export const isLeadId = (value: string): boolean => LEAD_ID.test(value);
