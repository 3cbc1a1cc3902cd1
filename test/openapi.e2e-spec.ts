import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { WEBHOOK_EVENT_TYPES } from '@lib/webhooks';
import { WEBHOOK_EVENT_DATA } from '@lib/webhooks/http/webhook-event-data.dto';
import { QuoteFixtures } from './quotes-fixtures';
import { TestApp } from './support/test-app';

describe('GET /openapi.yaml', () => {
  let app: TestApp;
  let document: any;

  beforeAll(async () => {
    app = await TestApp.start();
    const res = await app.request('GET', '/openapi.yaml');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toContain('yaml');
    document = parse(res.body);
  });
  afterAll(() => app.close());

  it('is a valid OpenAPI document', async () => {
    // The parser validates against the official OpenAPI 3.0 JSON schema and resolves every $ref.
    await expect(SwaggerParser.validate(structuredClone(document))).resolves.toBeDefined();
  });

  it('describes every route the gateway serves', () => {
    const served = new Set<string>();
    const routes = app.app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false });
    for (const line of routes.split('\n')) {
      const match = /([/][^\s(]*)\s*\(([^)]+)\)/.exec(line.replace(/^[\s│├└─]+/, ''));
      if (match) served.add(match[1]);
    }
    const documented = Object.keys(document.paths).map((p) => p.replace(/\{([^}]+)\}/g, ':$1'));
    for (const path of documented) expect(path.startsWith('/')).toBe(true);
    const external = [...served].filter((p) => p.startsWith('/api/v1') || p.startsWith('/admin/v1') || p.startsWith('/storefront/v1'));
    const missing = external.filter((p) => !documented.includes(p));
    expect(missing).toEqual([]);
  });

  it('documents the error envelope on every operation', () => {
    for (const [path, item] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const errors = Object.keys(operation.responses ?? {}).filter((s) => s >= '400');
        expect({ path, method, hasErrors: errors.length > 0 }).toEqual({ path, method, hasErrors: true });
      }
    }
  });

  it('documents the headers of decisions §3: Idempotency-Key on every POST, the rate-limit trio and request id on every answer', () => {
    for (const [path, item] of Object.entries<any>(document.paths)) {
      if (!/^\/(api|admin|storefront)\//.test(path)) continue;
      for (const [method, operation] of Object.entries<any>(item)) {
        if (method === 'post') expect({ path, key: operation.parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key') }).toEqual({ path, key: true });
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          expect({ path, method, status, headers: Object.keys(response.headers ?? {}) }).toEqual({ path, method, status, headers: expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id']) });
        }
        if (operation.responses['429']) expect(Object.keys(operation.responses['429'].headers)).toContain('Retry-After');
      }
    }
  });

  it('names no credential a JWT, and describes the organization', () => {
    for (const scheme of Object.values<any>(document.components.securitySchemes)) expect(scheme.bearerFormat).not.toBe('JWT');
    const organization = document.paths['/api/v1/organization'].get.responses['200'].content['application/json'].schema;
    const fields = Object.keys(document.components.schemas[organization.$ref.split('/').pop()].properties);
    expect(fields.sort()).toEqual(['currency', 'externalPricingEnabled', 'id', 'locale', 'name', 'plan', 'slug', 'unitSystem']);
  });

  it('describes the data of every webhook event, each a schema of its own that the envelope\'s `data` refers to', () => {
    const data = document.components.schemas.WebhookEnvelopeResponse.properties.data;
    const referenced = data.anyOf.map((schema: { $ref: string }) => schema.$ref);
    for (const event of WEBHOOK_EVENT_TYPES) {
      const name = WEBHOOK_EVENT_DATA[event].name;
      expect({ event, described: name in document.components.schemas, referenced: referenced.includes(`#/components/schemas/${name}`) }).toEqual({ event, described: true, referenced: true });
      // Only this description ties `event` to a schema: OpenAPI 3.0 has no discriminator that reads a field beside `data`.
      expect(data.description).toContain(`\`${event}\` → ${name}`);
    }
    expect(referenced).toHaveLength(WEBHOOK_EVENT_TYPES.length);
  });

  it('describes the nulls the API answers with so that a strict OpenAPI 3.0 validator accepts them (nullable only beside type, never around a $ref)', async () => {
    const fixtures = new QuoteFixtures(app);
    const org = await fixtures.organization();
    const submissionId = await fixtures.submission(org);
    // Ajv applies OpenAPI 3.0's `nullable` (null allowed where `type` is), and every other keyword as written.
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(structuredClone(document), 'openapi.yaml');
    const errorsOf = (path: string, body: unknown) => {
      const schema = document.paths[path].get.responses['200'].content['application/json'].schema;
      const validate = ajv.compile({ $ref: `openapi.yaml${schema.$ref}` });
      return validate(body) ? [] : validate.errors;
    };

    const submission = await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey });
    expect(submission.body.externalPricing).toBeNull(); // no partner priced it: a nullable reference
    expect(submission.body.latestQuoteId).toBeNull();
    expect(errorsOf('/api/v1/submissions/{submissionId}', submission.body)).toEqual([]);
    const quoteId = await fixtures.createQuote(org, submissionId);
    expect(errorsOf('/api/v1/quotes/{quoteId}', await fixtures.quote(org, quoteId))).toEqual([]);
    // A quote read before its PDF was armed (the outbox arms it a moment after the quote is stored): status null.
    const quote = await fixtures.quote(org, quoteId);
    expect(errorsOf('/api/v1/quotes/{quoteId}', { ...quote, pdf: { ...quote.pdf, status: null, url: null } })).toEqual([]);
    expect(errorsOf('/api/v1/quotes/{quoteId}', { ...quote, pdf: { ...quote.pdf, status: 'lost' } })).not.toEqual([]);
    const pricedLater = await app.request('GET', `/api/v1/submissions/${submissionId}`, { token: org.apiKey });
    expect(errorsOf('/api/v1/submissions/{submissionId}', { ...pricedLater.body, externalPricing: { not: 'a frozen pricing' } })).not.toEqual([]);
  });
});
