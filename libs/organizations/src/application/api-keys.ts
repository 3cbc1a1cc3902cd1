import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CredentialResolver, type ApiKeyIdentity } from '@lib/http';
import { ReadStore } from '@lib/read-store';
import { APP_CONFIG, LruMap, randomBase62, type AppConfig } from '@lib/shared';
import { planAllowsApi } from '../domain/organization.decider';
import { API_KEYS, ORGANIZATIONS, type ApiKeyDocument, type OrganizationDocument } from '../projections/organizations.projection';

export const API_KEY_PREFIX = 'qk_live_';
const API_KEY_PATTERN = /^qk_live_[0-9A-Za-z]{32,64}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(40);
}

/** Keys are stored only as this hash; the raw key is shown once. */
export function hashApiKey(rawKey: string): string {
  return hash('sha256', rawKey, 'hex');
}

export function constantTimeEquals(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** How many resolved keys a process keeps; the least recently used go first. */
const RESOLVED_KEYS_KEPT = 10_000;

/**
 * Resolves the credentials of each request: API keys by hash, the admin token in constant time.
 * A resolved key is kept while the read models it came from are unchanged (their change tokens),
 * so a revoked key or a changed plan is seen by the next request, while the requests in between
 * skip two reads. Where the read store cannot give change tokens, every request reads.
 */
@Injectable()
export class OrganizationCredentialResolver extends CredentialResolver {
  private readonly resolved = new LruMap<string, { identity: ApiKeyIdentity; token: string }>(RESOLVED_KEYS_KEPT);
  /** The last combined change token, with the two it was made from. */
  private lastToken = { keys: '', organizations: '', token: '' };

  constructor(
    private readonly reads: ReadStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  keptApiKey(rawKey: string): ApiKeyIdentity | null | undefined {
    if (!API_KEY_PATTERN.test(rawKey)) return null;
    const kept = this.resolved.get(hashApiKey(rawKey));
    return kept && kept.token === this.changeToken() ? kept.identity : undefined;
  }

  resolveApiKey(rawKey: string): ApiKeyIdentity | null | Promise<ApiKeyIdentity | null> {
    const kept = this.keptApiKey(rawKey);
    if (kept !== undefined) return kept;
    const keyHash = hashApiKey(rawKey);
    // Taken before the reads: a write that lands during them makes the kept answer miss next time.
    const token = this.changeToken();
    return this.lookUp(keyHash).then((identity) => {
      if (identity && token !== null) this.resolved.set(keyHash, { identity, token });
      else this.resolved.delete(keyHash);
      return identity;
    });
  }

  private async lookUp(keyHash: string): Promise<ApiKeyIdentity | null> {
    const key = await this.reads.get<ApiKeyDocument>(API_KEYS, keyHash);
    if (!key || key.revoked) return null;
    const org = await this.reads.get<OrganizationDocument>(ORGANIZATIONS, key.organizationId);
    if (!org) return null;
    return { organizationId: key.organizationId, keyId: key.keyId, readOnly: key.readOnly, planAllowsApi: planAllowsApi(org.plan) };
  }

  private changeToken(): string | null {
    const keys = this.reads.changeToken(API_KEYS);
    const organizations = this.reads.changeToken(ORGANIZATIONS);
    if (keys === null || organizations === null) return null;
    // The same string while both are the same: read on every request, it then allocates nothing.
    const last = this.lastToken;
    if (last.keys === keys && last.organizations === organizations) return last.token;
    this.lastToken = { keys, organizations, token: `${keys}|${organizations}` };
    return this.lastToken.token;
  }

  isAdminToken(token: string): boolean {
    return !!this.config.adminToken && constantTimeEquals(token, this.config.adminToken);
  }
}
