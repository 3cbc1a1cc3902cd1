import { Test } from '@nestjs/testing';
import { AggregateRepository, ReadYourWrites } from '@lib/event-sourcing';
import { EventStore, SqliteEventStore } from '@lib/event-store';
import { Clock, IdGenerator, ManualClock, RandomIdGenerator } from '@lib/shared';
import { SlugTaken } from '../domain/organization.errors';
import { ORGANIZATION_STREAM, type OrganizationEvent, type OrganizationProfile } from '../domain/organization.events';
import { randomBytes } from 'node:crypto';
import { CreateOrganization, CreateOrganizationHandler, type CreatedOrganization } from './organization.commands';
import { SigningSecretSeal } from './signing-secret-seal';

describe('CreateOrganization (embedded event store)', () => {
  let events: SqliteEventStore;

  /** A handler as one process has it, on the shared store. */
  const handler = async () => {
    const module = await Test.createTestingModule({
      providers: [
        CreateOrganizationHandler,
        AggregateRepository,
        ReadYourWrites,
        { provide: EventStore, useValue: events },
        { provide: IdGenerator, useValue: new RandomIdGenerator() },
        { provide: Clock, useValue: new ManualClock() },
        { provide: SigningSecretSeal, useValue: new SigningSecretSeal(randomBytes(32)) },
      ],
    }).compile();
    return module.get(CreateOrganizationHandler);
  };

  const profile = (name: string, slug = 'kozijn-bv'): OrganizationProfile => ({ name, slug, locale: 'nl', unitSystem: 'metric', currency: 'EUR', plan: 'pro' });

  /** The organizations stored with this slug, however their creations went. */
  const organizationsWithSlug = async (slug: string) => {
    const stored = await events.readAll({ after: 0, maxCount: 1000, filter: { streamPrefixes: [ORGANIZATION_STREAM] } });
    return stored
      .filter((event) => event.type === 'organization.v1.created')
      .map((event) => (event as unknown as Extract<OrganizationEvent, { type: 'organization.v1.created' }>).data)
      .filter((created) => created.profile.slug === slug);
  };

  /** Makes the next append to an organization stream fail, as a busy or broken store would. */
  const failNextOrganizationAppend = () => {
    const append = events.appendToStream.bind(events);
    let failed = false;
    jest.spyOn(events, 'appendToStream').mockImplementation(async (streamId, data, expected) => {
      if (failed || !streamId.startsWith(ORGANIZATION_STREAM)) return append(streamId, data, expected);
      failed = true;
      throw Object.assign(new Error('SQLITE_BUSY: database is locked'), { code: 'SQLITE_BUSY' });
    });
  };

  beforeEach(() => {
    events = new SqliteEventStore({ file: ':memory:' });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await events.close();
  });

  it('given a creation that failed after claiming its slug, when it is retried, then the organization is created with that slug', async () => {
    const create = await handler();
    failNextOrganizationAppend();
    await expect(create.execute(new CreateOrganization(profile('Kozijn')))).rejects.toThrow('SQLITE_BUSY');

    const { organizationId } = await create.execute(new CreateOrganization(profile('Kozijn BV')));

    expect(await organizationsWithSlug('kozijn-bv')).toEqual([expect.objectContaining({ organizationId, profile: profile('Kozijn BV') })]);
    await expect(create.execute(new CreateOrganization(profile('Other')))).rejects.toBeInstanceOf(SlugTaken);
  });

  it('given two creations with the same slug at once, then one organization is created and the other is told the slug is taken', async () => {
    const [first, second] = [await handler(), await handler()];
    const results = await Promise.allSettled([first.execute(new CreateOrganization(profile('First'))), second.execute(new CreateOrganization(profile('Second')))]);

    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((result) => result.status === 'rejected').map((result) => (result as PromiseRejectedResult).reason)).toEqual([expect.any(SlugTaken)]);
    expect(await organizationsWithSlug('kozijn-bv')).toHaveLength(1);
  });

  it('given a failed creation retried twice at once, then one retry creates the organization and the other is told the slug is taken', async () => {
    failNextOrganizationAppend();
    await expect((await handler()).execute(new CreateOrganization(profile('Kozijn')))).rejects.toThrow('SQLITE_BUSY');

    const results = await Promise.allSettled([(await handler()).execute(new CreateOrganization(profile('Retry A'))), (await handler()).execute(new CreateOrganization(profile('Retry B')))]);

    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(results.map((result) => (result.status === 'rejected' ? result.reason : null)).filter(Boolean)).toEqual([expect.any(SlugTaken)]);
    const created = await organizationsWithSlug('kozijn-bv');
    expect(created).toHaveLength(1);
    expect(results).toContainEqual({ status: 'fulfilled', value: expect.objectContaining({ organizationId: created[0].organizationId }) });
  });

  it('given a creation still between its claim and its organization, when a retry takes the claim over, then the first is told the slug is taken', async () => {
    const [slow, retry] = [await handler(), await handler()];
    let retried: Promise<CreatedOrganization> | undefined;
    // The slow request's organization append waits until the retry has finished; then it reaches the store (as itself, not as a failure).
    const append = events.appendToStream.bind(events);
    let paused = false;
    jest.spyOn(events, 'appendToStream').mockImplementation(async (streamId, data, expected) => {
      if (!paused && streamId.startsWith(ORGANIZATION_STREAM)) {
        paused = true;
        retried = retry.execute(new CreateOrganization(profile('Retry')));
        await retried;
      }
      return append(streamId, data, expected);
    });

    await expect(slow.execute(new CreateOrganization(profile('Slow')))).rejects.toBeInstanceOf(SlugTaken);

    const { organizationId } = await retried!;
    expect(await organizationsWithSlug('kozijn-bv')).toEqual([expect.objectContaining({ organizationId, profile: profile('Retry') })]);
  });
});
