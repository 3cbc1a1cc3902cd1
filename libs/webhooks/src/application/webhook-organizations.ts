import { Injectable } from '@nestjs/common';
import { upcast } from '@lib/event-sourcing';
import { EventStore, type RecordedEvent } from '@lib/event-store';
import { LruMap } from '@lib/shared';
import { organizationStream } from '@lib/organizations/domain/organization.events';
import { SigningSecretSeal } from '@lib/organizations/application/signing-secret-seal';
import { foldWebhookOrganization, type WebhookOrganization } from '../domain/organization-profile';

const MAX_CACHED_ORGANIZATIONS = 1_000;

/**
 * Organizations as webhook delivery sees them, folded from their event streams (the signing
 * secrets are only there). Every call reads the events appended since the last call, so a
 * rotated secret or a changed URL counts from the very next attempt.
 */
@Injectable()
export class WebhookOrganizations {
  private readonly streams = new LruMap<string, RecordedEvent[]>(MAX_CACHED_ORGANIZATIONS);

  constructor(
    private readonly events: EventStore,
    private readonly seal: SigningSecretSeal,
  ) {}

  /** The organization now: current URLs and the secrets live at this moment. */
  async current(organizationId: string): Promise<WebhookOrganization | null> {
    return foldWebhookOrganization(await this.read(organizationId), this.seal);
  }

  /** The organization as it was when the event at `position` was appended (deterministic on replay). */
  async asOf(organizationId: string, position: number): Promise<WebhookOrganization | null> {
    return foldWebhookOrganization(await this.read(organizationId), this.seal, position);
  }

  private async read(organizationId: string): Promise<RecordedEvent[]> {
    const cached = this.streams.get(organizationId) ?? [];
    const fromRevision = cached.length ? cached[cached.length - 1].revision + 1 : 0;
    const fresh = await this.events.readStream(organizationStream(organizationId), { fromRevision });
    const all = fresh.length ? [...cached, ...fresh.map(upcast)] : cached;
    this.streams.set(organizationId, all);
    return all;
  }
}
