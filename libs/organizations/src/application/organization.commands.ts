import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { randomBytes } from 'node:crypto';
import { Clock, IdGenerator, idOfRequest, WriteStoredNotYetVisible } from '@lib/shared';
import { organizationDecider } from '../domain/organization.decider';
import { SlugTaken } from '../domain/organization.errors';
import { organizationStream, slugStream, type OrganizationProfile, type OrganizationSlugClaimed, type OrganizationSettings, type OrganizationSettingsPatch } from '../domain/organization.events';
import { generateApiKey, hashApiKey } from './api-keys';
import { SigningSecretSeal } from './signing-secret-seal';
import type { OrganizationView } from './organization-directory';
import { EventStore, WrongExpectedRevisionError } from '@lib/event-store';

export const DEFAULT_SETTINGS: OrganizationSettings = {
  webhookUrl: null,
  pricingWebhookUrl: null,
  externalPricingEnabled: false,
  pricingTimeoutMs: 10_000,
  quoteDefaults: { taxRate: 0, validityDays: 30 },
};

const ADMIN = { actor: 'admin' };

/**
 * Who a creation is recorded as made by (the events' `actor`): the admin API by default; the
 * product itself (`system:demo-seed`) for the demo organization it seeds on a first start, which
 * no admin asked for (2026-11-27, found by a review of audit:export).
 */
export type CreatorActor = 'admin' | `system:${string}`;

/** Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export class CreateOrganization {
  constructor(
    readonly profile: OrganizationProfile,
    readonly settings?: OrganizationSettingsPatch,
    /** the id the organization takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly requestedId?: string,
    readonly actor: CreatorActor = 'admin',
  ) {}
}

export interface CreatedOrganization {
  organizationId: string;
  /** the signing secret the creation minted (`whsec_…`, settings with a webhook URL or live pricing), to be shown this once; null when it minted none */
  mintedSigningSecret: string | null;
  /**
   * the organization as created, for an answer that must not wait for the read side (it shows a
   * minted secret); for the retry of a keyed request whose first answer was lost, as it now is
   */
  created: OrganizationView;
}

/**
 * A slug is claimed in its own stream, then the organization is created in another: there is no
 * transaction over both. When the creation fails after the claim (a store error, a crash), the
 * claim points at an organization that does not exist; the next creation with that slug takes
 * the claim over and creates the organization under the claimed id. Both creations append with
 * `no_stream`, so of two requests doing so at once exactly one succeeds and the other is told the
 * slug is taken (docs/decisions/platform.md, Organizations).
 */
@CommandHandler(CreateOrganization)
export class CreateOrganizationHandler implements ICommandHandler<CreateOrganization, CreatedOrganization> {
  constructor(
    private readonly events: EventStore,
    private readonly repository: AggregateRepository,
    private readonly readYourWrites: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly seal: SigningSecretSeal,
  ) {}

  async execute({ profile, settings: patch, requestedId, actor }: CreateOrganization): Promise<CreatedOrganization> {
    const metadata = { actor };
    const at = this.clock.now();
    const madeAt = async (id: string) => (await this.repository.load(organizationDecider, organizationStream(id))).state.createdAt;
    const wanted = await idOfRequest(requestedId, madeAt, at, () => this.ids.next('org'));
    const { organizationId, made } = await this.claimSlug(profile.slug, wanted, requestedId, at, metadata);
    if (made) return this.madeBefore(organizationId);
    const settings: OrganizationSettings = { ...DEFAULT_SETTINGS, ...patch, quoteDefaults: { ...DEFAULT_SETTINGS.quoteDefaults, ...patch?.quoteDefaults } };
    // Minted on every creation in case the settings need a secret; only the events keep it, sealed.
    const secretId = this.ids.next('whs');
    const secret = newSigningSecret();
    const mintedSecret = { secretId, sealedSecret: this.seal.seal(secret, { organizationId, secretId }) };
    const request = organizationId === requestedId ? requestedId : undefined;
    const created = organizationDecider.decide({ type: 'createOrganization', organizationId, profile, settings, mintedSecret, request, at }, organizationDecider.initialState());
    let position: number;
    try {
      ({ position } = await this.events.appendToStream(organizationStream(organizationId), created.map((event) => ({ ...event, metadata })), 'no_stream'));
    } catch (error) {
      // Another request created the organization of this claim first: it has the slug. (Not through
      // the repository: its conflict retry would answer "organization already exists" on `id`.)
      if (error instanceof WrongExpectedRevisionError) throw new SlugTaken(profile.slug);
      throw error;
    }
    const minted = created.some((event) => event.type === 'organization.v2.signingSecretRotated');
    if (minted) await readableOrShownAnyway(this.readYourWrites, position);
    // The 503 names the organization made, so a retry finds it rather than a taken slug.
    else await this.readYourWrites.waitFor(position, { organizationId });
    return {
      organizationId,
      mintedSigningSecret: minted ? secret : null,
      created: { id: organizationId, ...profile, settings, apiKeys: [], hasSigningSecret: minted, createdAt: at, updatedAt: at },
    };
  }

  /**
   * The retry of a keyed request whose first answer was lost: the organization that request
   * created, as it now is, without a secret the creation minted (shown in the first answer only;
   * a replay under the key leaves it out too).
   */
  private async madeBefore(organizationId: string): Promise<CreatedOrganization> {
    const { state, position } = await this.repository.load(organizationDecider, organizationStream(organizationId));
    await this.readYourWrites.waitFor(position, { organizationId });
    const { profile, settings, hasSigningSecret, createdAt } = state as typeof state & { profile: OrganizationProfile; settings: OrganizationSettings; createdAt: number };
    return { organizationId, mintedSigningSecret: null, created: { id: organizationId, ...profile, settings, apiKeys: [], hasSigningSecret, createdAt, updatedAt: createdAt } };
  }

  /**
   * The id to create the organization under: a new claim's, or that of a claim whose organization
   * was never created. `made` when the slug's organization exists and `request` (a keyed
   * request's id, which `organizationId` is then) created it in an earlier attempt. Not when the
   * organization only has that id: another creation takes over the claim a crashed attempt left
   * without an organization, under the claim's id.
   */
  private async claimSlug(slug: string, organizationId: string, request: string | undefined, at: number, metadata: { actor: CreatorActor }): Promise<{ organizationId: string; made: boolean }> {
    const claimed: OrganizationSlugClaimed = { type: 'organizationSlug.v1.claimed', data: { slug, organizationId, at } };
    try {
      await this.events.appendToStream(slugStream(slug), [{ ...claimed, metadata }], 'no_stream');
      return { organizationId, made: false };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
    const [claim] = await this.events.readStream(slugStream(slug), { maxCount: 1 });
    const claimedFor = (claim.data as OrganizationSlugClaimed['data']).organizationId;
    if ((await this.events.readStream(organizationStream(claimedFor), { maxCount: 1 })).length === 0) return { organizationId: claimedFor, made: false };
    if (request !== undefined && claimedFor === organizationId) {
      const { state } = await this.repository.load(organizationDecider, organizationStream(organizationId));
      if (state.createdBy === request) return { organizationId, made: true };
    }
    throw new SlugTaken(slug);
  }
}

export class UpdateOrganization {
  constructor(
    readonly organizationId: string,
    readonly changes: Partial<Omit<OrganizationProfile, 'slug'>>,
    readonly settings?: OrganizationSettingsPatch,
  ) {}
}

export interface UpdatedOrganization {
  /** the signing secret this change minted (`whsec_…`), to be shown this once; null when it minted none */
  mintedSigningSecret: string | null;
}

@CommandHandler(UpdateOrganization)
export class UpdateOrganizationHandler implements ICommandHandler<UpdateOrganization, UpdatedOrganization> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly readYourWrites: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly seal: SigningSecretSeal,
  ) {}

  async execute({ organizationId, changes, settings }: UpdateOrganization): Promise<UpdatedOrganization> {
    // Minted on every change in case the decider needs a first secret; only the events keep it, sealed.
    const secretId = this.ids.next('whs');
    const secret = newSigningSecret();
    const { newEvents, position } = await this.repository.handle(
      organizationDecider,
      organizationStream(organizationId),
      { type: 'updateOrganization', changes, settings, mintedSecret: { secretId, sealedSecret: this.seal.seal(secret, { organizationId, secretId }) }, at: this.clock.now() },
      { metadata: ADMIN, what: 'The organization', awaitProjections: false },
    );
    await readableOrShownAnyway(this.readYourWrites, position);
    const minted = newEvents.some((event) => event.type === 'organization.v2.signingSecretRotated' && event.data.secretId === secretId);
    return { mintedSigningSecret: minted ? secret : null };
  }
}

/**
 * Waits for the read side like every write, but a secret the write made is shown even when the
 * read side does not catch up in time: it exists only in this answer, and a 503 would lose it
 * (a rotation's new secret would sign with nobody holding it). The answer may then show the
 * organization as the read side still has it.
 */
async function readableOrShownAnyway(readYourWrites: ReadYourWrites, position: number | null): Promise<void> {
  if (position === null) return;
  await readYourWrites.waitFor(position).catch((error: unknown) => {
    if (!(error instanceof WriteStoredNotYetVisible)) throw error;
  });
}

export class CreateApiKey {
  constructor(
    readonly organizationId: string,
    readonly name: string,
    readonly readOnly: boolean,
    /** the id the key takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly requestedId?: string,
    readonly actor: CreatorActor = 'admin',
  ) {}
}

export interface CreatedApiKey {
  id: string;
  name: string;
  readOnly: boolean;
  key: string;
  createdAt: number;
}

/**
 * The answer to CreateApiKey: the key made, with its secret; or, for the retry of a keyed request
 * whose first answer was lost, the key that request made, without its secret, as the answer kept
 * under the key would have been replayed (its secret was never stored, so it cannot be shown).
 */
export type ApiKeyAnswer = CreatedApiKey | Omit<CreatedApiKey, 'key'>;

@CommandHandler(CreateApiKey)
export class CreateApiKeyHandler implements ICommandHandler<CreateApiKey, ApiKeyAnswer> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly readYourWrites: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, name, readOnly, requestedId, actor }: CreateApiKey): Promise<ApiKeyAnswer> {
    const stream = organizationStream(organizationId);
    const at = this.clock.now();
    const madeAt = async (id: string) => (await this.repository.load(organizationDecider, stream)).state.keysMade[id]?.at ?? null;
    const keyId = await idOfRequest(requestedId, madeAt, at, () => this.ids.next('key'));
    const key = generateApiKey();
    const { newEvents, state, position } = await this.repository.handle(
      organizationDecider,
      stream,
      { type: 'createApiKey', keyId, name, readOnly, keyHash: hashApiKey(key), keyPrefix: key.slice(0, 12), at },
      { metadata: { actor }, what: 'The organization', awaitProjections: false },
    );
    if (newEvents.length === 0) {
      const made = state.keysMade[keyId];
      return { id: keyId, name: made.name, readOnly: made.readOnly, createdAt: made.at };
    }
    await readableOrShownAnyway(this.readYourWrites, position);
    return { id: keyId, name, readOnly, key, createdAt: at };
  }
}

export class RevokeApiKey {
  constructor(readonly organizationId: string, readonly keyId: string) {}
}

@CommandHandler(RevokeApiKey)
export class RevokeApiKeyHandler implements ICommandHandler<RevokeApiKey, void> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly clock: Clock,
  ) {}

  async execute({ organizationId, keyId }: RevokeApiKey): Promise<void> {
    await this.repository.handle(organizationDecider, organizationStream(organizationId), { type: 'revokeApiKey', keyId, at: this.clock.now() }, { metadata: ADMIN });
  }
}

export class RotateSigningSecret {
  constructor(
    readonly organizationId: string,
    /** the id the new secret takes (a keyed request's, the same on its retries: see idempotentId); a new one when absent */
    readonly requestedId?: string,
  ) {}
}

/**
 * The answer to RotateSigningSecret: the new secret; or, for the retry of a keyed request whose
 * first answer was lost, nothing, as the answer kept under the key would have been replayed (the
 * secret is sealed in the event log and shown in no other answer).
 */
export type RotationAnswer = { secret: string } | Record<string, never>;

@CommandHandler(RotateSigningSecret)
export class RotateSigningSecretHandler implements ICommandHandler<RotateSigningSecret, RotationAnswer> {
  constructor(
    private readonly repository: AggregateRepository,
    private readonly readYourWrites: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly seal: SigningSecretSeal,
  ) {}

  async execute({ organizationId, requestedId }: RotateSigningSecret): Promise<RotationAnswer> {
    const stream = organizationStream(organizationId);
    const at = this.clock.now();
    const madeAt = async (id: string) => (await this.repository.load(organizationDecider, stream)).state.secretsMade[id] ?? null;
    const secretId = await idOfRequest(requestedId, madeAt, at, () => this.ids.next('whs'));
    const secret = newSigningSecret();
    const { newEvents, position } = await this.repository.handle(
      organizationDecider,
      stream,
      { type: 'rotateSigningSecret', secretId, sealedSecret: this.seal.seal(secret, { organizationId, secretId }), at },
      { metadata: ADMIN, awaitProjections: false },
    );
    if (newEvents.length === 0) return {};
    await readableOrShownAnyway(this.readYourWrites, position);
    return { secret };
  }
}

export const ORGANIZATION_COMMAND_HANDLERS = [
  CreateOrganizationHandler,
  UpdateOrganizationHandler,
  CreateApiKeyHandler,
  RevokeApiKeyHandler,
  RotateSigningSecretHandler,
];
