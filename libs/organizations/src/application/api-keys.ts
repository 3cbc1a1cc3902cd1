import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { CredentialResolver, type ApiKeyIdentity } from '@lib/http';
import { ReadStore } from '@lib/read-store';
import { APP_CONFIG, randomBase62, type AppConfig } from '@lib/shared';
import { planAllowsApi } from '../domain/organization.decider';
import { API_KEYS, ORGANIZATIONS, type ApiKeyDocument, type OrganizationDocument } from '../projections/organizations.projection';

export const API_KEY_PREFIX = 'qk_live_';
const API_KEY_PATTERN = /^qk_live_[0-9A-Za-z]{32,64}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(40);
}

/** Keys are stored only as this hash; the raw key is shown once. */
export function hashApiKey(rawKey: string): string {
  return createHash('sha256').update(rawKey).digest('hex');
}

export function constantTimeEquals(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** Resolves the credentials of each request: API keys by hash, the admin token in constant time. */
@Injectable()
export class OrganizationCredentialResolver extends CredentialResolver {
  constructor(
    private readonly reads: ReadStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async resolveApiKey(rawKey: string): Promise<ApiKeyIdentity | null> {
    if (!API_KEY_PATTERN.test(rawKey)) return null;
    const key = await this.reads.get<ApiKeyDocument>(API_KEYS, hashApiKey(rawKey));
    if (!key || key.revoked) return null;
    const org = await this.reads.get<OrganizationDocument>(ORGANIZATIONS, key.organizationId);
    if (!org) return null;
    return { organizationId: key.organizationId, keyId: key.keyId, readOnly: key.readOnly, planAllowsApi: planAllowsApi(org.plan) };
  }

  isAdminToken(token: string): boolean {
    return !!this.config.adminToken && constantTimeEquals(token, this.config.adminToken);
  }
}
