import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { stringify } from 'yaml';

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code' },
        message: { type: 'string' },
        details: {
          type: 'object',
          additionalProperties: true,
          properties: { fields: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } } },
        },
      },
    },
  },
};

function errorResponse(codes: string[]) {
  return { description: `error.code: ${codes.map((c) => `\`${c}\``).join(', ')}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
}

/**
 * Errors every operation of an area can answer with (decisions §2, §3). Operation-specific
 * codes come from `@ApiErrors(...)` on the handlers and are kept.
 */
function addCommonErrors(document: OpenAPIObject): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      const write = ['post', 'put', 'patch'].includes(method);
      const common: Record<string, string[]> = { '429': ['rate_limited'], '500': ['internal_error'], '503': ['unavailable'] };
      if (write) Object.assign(common, { '400': ['invalid_json'], '413': ['payload_too_large'], '415': ['unsupported_media_type'] });
      if (write || /\{|\?/.test(path) || operation.parameters?.some((p: { in: string }) => p.in === 'query')) common['422'] = ['validation_error'];
      // A customer's session is answered 401 when unknown, as another session's (sessions-and-submissions.md).
      if (path.includes('{') && !path.startsWith('/storefront/v1/sessions/')) common['404'] = ['not_found'];
      if (path.startsWith('/api/v1/') && !path.startsWith('/api/v1/configuration-sessions')) {
        common['401'] = ['unauthorized'];
        common['403'] = write || method === 'delete' ? ['forbidden_plan', 'read_only_key'] : ['forbidden_plan'];
      }
      if (path.startsWith('/admin/v1/')) common['401'] = ['unauthorized'];
      for (const [status, codes] of Object.entries(common)) operation.responses[status] ??= errorResponse(codes);
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (Number(status) >= 400 && response.schema === undefined && !response.content) {
          response.content = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } };
        }
      }
    }
  }
}

const HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per minute in the bucket this request counted against (decisions §3); absent while that limit is off', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current minute', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the current minute window resets', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  'X-Request-Id': { description: "The request's id: the caller's X-Request-Id when it is 1-128 plain characters, else a new UUID", schema: { type: 'string' } },
  'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Same key and same JSON body within 24 h replay the first answer; the same key with another body is 422 `validation_error`.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/**
 * The headers of decisions §3 on every operation of the three APIs: the rate-limit trio and the
 * request id on every response, Retry-After on 429, and Idempotency-Key on every POST.
 */
function addCommonHeaders(document: OpenAPIObject): void {
  document.components!.headers = { ...document.components!.headers, ...HEADERS };
  const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
  for (const [path, item] of Object.entries(document.paths)) {
    if (!/^\/(api|admin|storefront)\//.test(path)) continue;
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      if (!operation || typeof operation !== 'object' || !operation.responses) continue;
      if (method === 'post') operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY];
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        response.headers = { ...response.headers, 'X-Request-Id': ref('X-Request-Id'), 'RateLimit-Limit': ref('RateLimit-Limit'), 'RateLimit-Remaining': ref('RateLimit-Remaining'), 'RateLimit-Reset': ref('RateLimit-Reset') };
        if (status === '429') response.headers['Retry-After'] = ref('Retry-After');
        if (method === 'post' && status.startsWith('2')) response.headers['Idempotent-Replayed'] = ref('Idempotent-Replayed');
      }
    }
  }
}

/**
 * OpenAPI 3.0.3 says `nullable` only widens the `type` beside it; every other keyword still
 * applies to a null, so a strict validator refuses nulls the API answers with where
 * @nestjs/swagger writes:
 * - `{ nullable: true, type: object, allOf: [$ref] }` for a nullable property typed by another
 *   schema: it becomes `anyOf: [$ref, a schema that admits only null]`;
 * - `{ nullable: true, enum: [...] }`: null joins the enum.
 */
function nullableSchemas(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(nullableSchemas);
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  const { allOf, enum: values } = schema;
  if (schema.nullable === true && Array.isArray(allOf) && allOf.length === 1) {
    delete schema.nullable;
    delete schema.type;
    delete schema.allOf;
    schema.anyOf = [allOf[0], { type: 'object', nullable: true, enum: [null] }];
  }
  if (schema.nullable === true && Array.isArray(values) && !values.includes(null)) schema.enum = [...values, null];
  Object.values(schema).forEach(nullableSchemas);
}

/** The machine-readable API description, generated from the controllers and DTOs. */
export function buildOpenApiDocument(app: NestFastifyApplication, publicBaseUrl: string): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Quoting and Live-Pricing Service')
    .setDescription('External API v1 (`/api/v1`), admin API (`/admin/v1`) and storefront API (`/storefront/v1`). Errors use the envelope `{ error: { code, message, details? } }`.')
    .setVersion('1.0.0')
    .addServer(publicBaseUrl)
    // Opaque bearer tokens, none of them a JWT (Nest's default bearerFormat).
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'qk_live_…', description: 'API key (qk_live_…)' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'adm_…', description: 'ADMIN_TOKEN' }, 'admin')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'cst_…', description: 'customerToken of a storefront session' }, 'customerToken')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, ErrorEnvelope: ERROR_ENVELOPE as never };
  addCommonErrors(document);
  addCommonHeaders(document);
  nullableSchemas(document.components?.schemas ?? {});
  return document;
}

export function serveOpenApi(app: NestFastifyApplication, publicBaseUrl: string): void {
  let yaml: string | null = null;
  app
    .getHttpAdapter()
    .getInstance()
    .get('/openapi.yaml', async (_request, reply) => {
      yaml ??= stringify(buildOpenApiDocument(app, publicBaseUrl), { aliasDuplicateObjects: false });
      return reply.type('application/yaml').send(yaml);
    });
}
