/**
 * Bodies refused for themselves, each with its own error code (decisions §3): a malformed one, one
 * that is not JSON, one too large, one that is not an object, one with text that is not
 * well-formed Unicode, one with a key given twice, one nested too deep. A route that checks its
 * caller before the body (decisions §8, the customer token) refuses a caller it would not take
 * with that refusal whichever of these it sends.
 */
export const BODIES_REFUSED: Array<[{ payload: string; headers: Record<string, string> }, string]> = [
  [{ payload: '{"configHash":', headers: { 'content-type': 'application/json' } }, 'invalid_json'],
  [{ payload: 'configHash=abc', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 'unsupported_media_type'],
  [{ payload: JSON.stringify({ configHash: 'x'.repeat(1_100_000) }), headers: { 'content-type': 'application/json' } }, 'payload_too_large'],
  [{ payload: 'null', headers: { 'content-type': 'application/json' } }, 'validation_error'],
  [{ payload: '{"configHash":"\\ud800"}', headers: { 'content-type': 'application/json' } }, 'validation_error'],
  [{ payload: '{"configHash":"a","configHash":"b"}', headers: { 'content-type': 'application/json' } }, 'validation_error'],
  [{ payload: `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`, headers: { 'content-type': 'application/json' } }, 'invalid_json'],
];
