import { createHash } from 'node:crypto';
import { canonicalJson } from '@lib/shared';
import { Configuration } from './configuration';

/** The configuration fingerprint of api-v1: `sha256:` + hex SHA-256 of the UTF-8 bytes of its JCS form. */
export function configHash(configuration: Configuration): string {
  return `sha256:${createHash('sha256').update(canonicalJson(configuration), 'utf8').digest('hex')}`;
}
