// Creates the records the fuzz run needs through the public APIs and prints them as shell
// variables: an organization with a key, a template, a session with its customer token, a
// submission, a quote that was sent (so its customer link exists), a contact and a lead.
const base = process.argv[2];
const admin = process.argv[3];

async function call(method, path, { token, body } = {}) {
  const response = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

const { DEMO_TEMPLATE } = await import(new URL('../../dist/apps/api-gateway/src/demo-template.js', import.meta.url));
const { exampleConfigurationInput } = await import(new URL('../../dist/libs/templates/src/domain/example.fixture.js', import.meta.url));

/** A customer configures the template on the storefront and submits it; returns the submission id. */
async function submitted(slug, templateId) {
  const session = await call('POST', `/storefront/v1/${slug}/sessions`, { body: { templateId } });
  await call('PUT', `/storefront/v1/sessions/${session.sessionId}/configuration`, { token: session.customerToken, body: exampleConfigurationInput() });
  const result = await call('POST', `/storefront/v1/sessions/${session.sessionId}/submit`, { token: session.customerToken, body: { customer: { name: 'Fuzz Customer', email: 'fuzz@example.com' } } });
  return result.submissionId;
}

const slug = `fuzz-${Date.now().toString(36)}`;
const org = await call('POST', '/admin/v1/organizations', { token: admin, body: { name: 'Fuzz Windows', slug, plan: 'pro' } });
const key = await call('POST', `/admin/v1/organizations/${org.id}/api-keys`, { token: admin, body: { name: 'fuzz' } });
const template = await call('POST', `/admin/v1/organizations/${org.id}/templates`, { token: admin, body: DEMO_TEMPLATE });
const submissionId = await submitted(slug, template.id);
// a second, open session for the fuzzer to configure
const open = await call('POST', `/storefront/v1/${slug}/sessions`, { body: { templateId: template.id } });
const quote = await call('POST', `/api/v1/submissions/${submissionId}/quotes`, { token: key.key, body: {} });
await call('POST', `/api/v1/quotes/${quote.quoteId}/send`, { token: key.key, body: { recipients: ['fuzz@example.com'] } });
const contact = await call('POST', '/api/v1/contacts', { token: key.key, body: { email: 'contact@example.com', name: 'Contact' } });
const lead = await call('POST', `/storefront/v1/${slug}/leads`, { body: { name: 'Lead', email: 'lead@example.com', message: 'Please call' } });

// the admin API is fuzzed on an organization of its own: its plan and keys may change under it
const adminOrg = await call('POST', '/admin/v1/organizations', { token: admin, body: { name: 'Fuzz Admin', slug: `${slug}-admin`, plan: 'pro' } });
const adminKey = await call('POST', `/admin/v1/organizations/${adminOrg.id}/api-keys`, { token: admin, body: { name: 'revocable' } });
const adminTemplate = await call('POST', `/admin/v1/organizations/${adminOrg.id}/templates`, { token: admin, body: DEMO_TEMPLATE });
const adminSubmissionId = await submitted(adminOrg.slug, adminTemplate.id);
const adminLead = await call('POST', `/storefront/v1/${adminOrg.slug}/leads`, { body: { name: 'Lead', email: 'lead@example.com', message: 'Please call' } });

const values = {
  FUZZ_ADMIN_ORG_ID: adminOrg.id,
  FUZZ_ADMIN_KEY_ID: adminKey.id,
  FUZZ_ADMIN_TEMPLATE_ID: adminTemplate.id,
  FUZZ_ADMIN_SUBMISSION_ID: adminSubmissionId,
  FUZZ_ADMIN_LEAD_ID: adminLead.id,
  FUZZ_ORG_ID: org.id,
  FUZZ_ORG_SLUG: slug,
  FUZZ_API_KEY: key.key,
  FUZZ_TEMPLATE_ID: template.id,
  FUZZ_SESSION_ID: open.sessionId,
  FUZZ_CUSTOMER_TOKEN: open.customerToken,
  FUZZ_SUBMISSION_ID: submissionId,
  FUZZ_QUOTE_ID: quote.quoteId,
  FUZZ_CONTACT_ID: contact.id,
  FUZZ_LEAD_ID: lead.id,
};
for (const [name, value] of Object.entries(values)) console.log(`export ${name}='${value}'`);
