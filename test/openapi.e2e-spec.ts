import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
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
});
