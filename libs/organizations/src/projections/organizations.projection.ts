import { collectionName, type Projection, type ProjectedDocument } from '@lib/event-sourcing';
import type { RecordedEvent } from '@lib/event-store';
import { ORGANIZATION_STREAM, type OrganizationEvent, type OrganizationProfile, type OrganizationSettings } from '../domain/organization.events';

export interface ApiKeyView {
  id: string;
  name: string;
  readOnly: boolean;
  keyPrefix: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface OrganizationDocument extends ProjectedDocument, OrganizationProfile {
  id: string;
  settings: OrganizationSettings;
  apiKeys: ApiKeyView[];
  hasSigningSecret: boolean;
  createdAt: number;
  updatedAt: number;
}

/** Looked up by key hash on every authenticated request. */
export interface ApiKeyDocument extends ProjectedDocument {
  id: string;
  organizationId: string;
  keyId: string;
  readOnly: boolean;
  revoked: boolean;
}

export const organizationsProjection: Projection = {
  name: 'organizations',
  version: 1,
  collections: {
    organizations: [{ fields: [{ field: 'slug', direction: 'asc' }] }],
    api_keys: [{ fields: [{ field: 'keyId', direction: 'asc' }] }],
  },
  filter: { streamPrefixes: [ORGANIZATION_STREAM] },
  async handle(recorded: RecordedEvent, context) {
    const event = recorded as unknown as OrganizationEvent;
    const id = event.data.organizationId;
    if (event.type === 'organization.v1.created') {
      context.put('organizations', {
        id,
        ...event.data.profile,
        settings: event.data.settings,
        apiKeys: [],
        hasSigningSecret: false,
        createdAt: event.data.at,
        updatedAt: event.data.at,
      } satisfies OrganizationDocument);
      return;
    }
    const org = await context.get<OrganizationDocument>('organizations', id);
    if (!org) return;
    const next: OrganizationDocument = { ...org, updatedAt: event.data.at };
    switch (event.type) {
      case 'organization.v1.profileChanged':
        Object.assign(next, event.data.changes);
        break;
      case 'organization.v1.settingsChanged':
        next.settings = event.data.settings;
        break;
      case 'organization.v1.apiKeyCreated':
        next.apiKeys = [
          ...org.apiKeys,
          { id: event.data.keyId, name: event.data.name, readOnly: event.data.readOnly, keyPrefix: event.data.keyPrefix, createdAt: event.data.at, revokedAt: null },
        ];
        context.put('api_keys', {
          id: event.data.keyHash,
          organizationId: id,
          keyId: event.data.keyId,
          readOnly: event.data.readOnly,
          revoked: false,
        } satisfies ApiKeyDocument);
        break;
      case 'organization.v1.apiKeyRevoked': {
        next.apiKeys = org.apiKeys.map((k) => (k.id === event.data.keyId ? { ...k, revokedAt: event.data.at } : k));
        const key = await context.get<ApiKeyDocument>('api_keys', event.data.keyHash);
        if (key) context.put('api_keys', { ...key, revoked: true });
        break;
      }
      case 'organization.v2.signingSecretRotated':
      case 'organization.v1.signingSecretRotated':
        next.hasSigningSecret = true;
        break;
    }
    context.put('organizations', next);
  },
};

export const ORGANIZATIONS = collectionName(organizationsProjection, 'organizations');
export const API_KEYS = collectionName(organizationsProjection, 'api_keys');
