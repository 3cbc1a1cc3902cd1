import type { ContactDetails } from './contact.events';

/** Maximum lengths of contact fields, in characters, of what is stored: free text after HTML is stripped, externalRef as sent. */
export const CONTACT_FIELD_LIMITS: Record<keyof ContactDetails, number> & { email: number } = {
  email: 254,
  name: 200,
  phone: 50,
  companyName: 200,
  address: 500,
  postalCode: 20,
  city: 100,
  country: 100,
  externalRef: 200,
};
