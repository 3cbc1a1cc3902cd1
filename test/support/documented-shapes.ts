import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { WEBHOOK_EVENT_DATA } from '@lib/webhooks/http/webhook-event-data.dto';
import type { TestApp } from './test-app';

/** Makes every object schema that lists its properties refuse others, so that a field sent but not documented is an error. */
function closed(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(closed);
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
  Object.values(schema).forEach(closed);
}

/**
 * What a receiver that validates against the served /openapi.yaml sees. The document lets every
 * object have more fields (events may grow); here they are closed, so a field the product sends
 * that the document does not describe fails the test.
 */
export class DocumentedShapes {
  /** The shapes of the document `app` serves. */
  static async of(app: TestApp): Promise<DocumentedShapes> {
    return new DocumentedShapes(parse((await app.request('GET', '/openapi.yaml')).body));
  }

  private readonly ajv = new Ajv({ strict: false, allErrors: true });

  constructor(private readonly document: any) {
    const strict = structuredClone(document);
    closed(strict.components.schemas);
    addFormats(this.ajv);
    this.ajv.addSchema(strict, 'openapi.yaml');
  }

  /** The errors of a delivered body's `data` against the schema the document gives its event. */
  dataErrors(body: { event: keyof typeof WEBHOOK_EVENT_DATA; data: unknown }): ErrorObject[] {
    return this.errors(`#/components/schemas/${WEBHOOK_EVENT_DATA[body.event].name}`, body.data);
  }

  /** The errors of a GET /api/v1/events/{id} answer against the document's response of that operation. */
  deliveryErrors(record: unknown): ErrorObject[] {
    return this.errors(this.document.paths['/api/v1/events/{id}'].get.responses['200'].content['application/json'].schema.$ref, record);
  }

  private errors(ref: string, value: unknown): ErrorObject[] {
    const validate = this.ajv.getSchema(`openapi.yaml${ref}`)!;
    return validate(value) ? [] : validate.errors!;
  }
}
