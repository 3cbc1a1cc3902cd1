import { randomBytes } from 'node:crypto';
import type { CommandBus } from '@nestjs/cqrs';
import type { AggregateRepository } from '@lib/event-sourcing';
import type { OrganizationDirectory } from '@lib/organizations';
import type { ReadStore } from '@lib/read-store';
import { RecordSessionAdjustment, type SessionReader } from '@lib/sessions';
import { ManualClock, type AppConfig } from '@lib/shared';
import type { WebhookDeliveries } from '@lib/webhooks';
import { CapabilityTokens, hashCapabilityToken } from '../domain/capability-token';
import { PRICING_DELIVERIES, PRICING_GRANTS, type PricingGrantDocument } from '../projections/pricing-grants.projection';
import { ConfigurationSessionAccess } from './configuration-session-access';

const CURRENT = `sha256:${'c'.repeat(64)}`;
const STALE = `sha256:${'5'.repeat(64)}`;
const ISSUED = 1_000_000;
const WINDOW = 600_000;
const IDLE_TTL = 86_400_000;

/** superseded: a newer token was issued; redelivery-asked: a redelivery was asked for, and none of its attempts minted a token yet */
type TokenFact = 'valid' | 'malformed' | 'unknown' | 'forged' | 'superseded' | 'redelivery-asked';
interface Facts {
  token: TokenFact;
  livePricing: boolean;
  sessionExpired: boolean;
  windowOver: boolean;
  bodyValid: boolean;
  hash: 'current' | 'stale';
  context?: 'configuration' | 'submission' | 'autofill';
}

const allFail: Omit<Facts, 'token'> = { livePricing: false, sessionExpired: true, windowOver: true, bodyValid: false, hash: 'stale' };

/** The service with in-memory stand-ins for the read model, organizations, the session and the command bus. */
function arrange(facts: Facts) {
  const tokens = new CapabilityTokens(randomBytes(32));
  const issued = tokens.derive('evt_1', 1);
  const grant: PricingGrantDocument = {
    id: hashCapabilityToken(issued),
    organizationId: 'org_a',
    sessionId: 'ses_1',
    configHash: facts.hash === 'current' ? CURRENT : STALE,
    context: facts.context ?? 'configuration',
    submissionId: facts.context && facts.context !== 'configuration' ? 'sub_1' : null,
    deliveryId: 'evt_1',
    generation: 1,
    issuedAt: ISSUED,
    expiresAt: ISSUED + WINDOW,
  };
  const grants = new Map<string, PricingGrantDocument>();
  let presented = issued;
  switch (facts.token) {
    case 'valid':
    case 'superseded':
    case 'redelivery-asked':
      grants.set(grant.id, grant);
      break;
    case 'malformed':
      presented = 'pct_not-a-token';
      break;
    case 'unknown':
      presented = tokens.derive('evt_unknown', 1);
      break;
    case 'forged': {
      // recorded, but not what this service's key derives (e.g. written under another key)
      presented = new CapabilityTokens(randomBytes(32)).derive('evt_1', 1);
      grants.set(hashCapabilityToken(presented), { ...grant, id: hashCapabilityToken(presented) });
      break;
    }
  }
  const deliveries = new Map([['evt_1', { id: 'evt_1', generation: facts.token === 'superseded' ? 2 : 1 }]]);
  const records = { find: async (id: string) => (id === 'evt_1' ? { id, generation: facts.token === 'valid' ? 1 : 2 } : null) };
  const reads = { get: async (collection: string, id: string) => (collection === PRICING_GRANTS ? grants.get(id) : collection === PRICING_DELIVERIES ? deliveries.get(id) : null) ?? null };
  const organizations = { get: async () => ({ currency: 'EUR', settings: { externalPricingEnabled: facts.livePricing } }) };
  const clock = new ManualClock(facts.windowOver ? ISSUED + WINDOW + 1 : ISSUED + WINDOW);
  const session = { exists: true, status: 'active', configHash: CURRENT, lastActivityAt: facts.sessionExpired ? clock.now() - IDLE_TTL - 1 : clock.now() - 1_000 };
  const repository = { load: async () => ({ state: session, revision: 3 }) };
  const commands = { execute: jest.fn(async () => ({ isCurrentConfiguration: true })) };
  const sessions = { sessionObject: async () => ({ sessionId: 'ses_1' }) };
  const access = new ConfigurationSessionAccess(
    reads as unknown as ReadStore,
    records as unknown as WebhookDeliveries,
    tokens,
    organizations as unknown as OrganizationDirectory,
    repository as unknown as AggregateRepository,
    sessions as unknown as SessionReader,
    commands as unknown as CommandBus,
    clock,
    { sessionIdleTtlMs: IDLE_TTL } as AppConfig,
  );
  const body = facts.bodyValid
    ? { configHash: facts.hash === 'current' ? CURRENT : STALE, lineItems: [{ description: 'Window', quantity: 1, unitPrice: 100, total: 1 }] }
    : { configHash: CURRENT, lineItems: [{ description: 'Window', quantity: 0, unitPrice: 100 }] };
  return { access, token: presented, body, commands };
}

async function outcome(facts: Facts): Promise<{ code: string; executed: number }> {
  const { access, token, body, commands } = arrange(facts);
  try {
    await access.writeAdjustment(token, body);
    return { code: 'applied', executed: commands.execute.mock.calls.length };
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error), executed: commands.execute.mock.calls.length };
  }
}

describe('PUT adjustments: decisions §8 checks, first failing one wins', () => {
  it.each<[string, Facts, string]>([
    ['malformed token, everything else wrong too', { token: 'malformed', ...allFail }, 'unauthorized'],
    ['unknown token', { token: 'unknown', ...allFail }, 'unauthorized'],
    ['forged token (recorded, but not derived by this key)', { token: 'forged', ...allFail }, 'unauthorized'],
    ['token superseded by a redelivery', { token: 'superseded', ...allFail }, 'unauthorized'],
    ['token of a delivery whose redelivery was asked for, before any attempt of it', { token: 'redelivery-asked', ...allFail }, 'unauthorized'],
    ['valid token, live pricing off, everything after wrong too', { token: 'valid', ...allFail }, 'forbidden_plan'],
    ['live pricing on, session expired, window over, bad body, stale hash', { token: 'valid', ...allFail, livePricing: true }, 'session_expired'],
    ['session active, window over, bad body, stale hash', { token: 'valid', ...allFail, livePricing: true, sessionExpired: false }, 'window_expired'],
    ['window open, bad body, stale hash', { token: 'valid', livePricing: true, sessionExpired: false, windowOver: false, bodyValid: false, hash: 'stale' }, 'validation_error'],
    ['valid body for a stale hash', { token: 'valid', livePricing: true, sessionExpired: false, windowOver: false, bodyValid: true, hash: 'stale' }, 'stale_config_hash'],
    ['everything in order (on the last millisecond of the window)', { token: 'valid', livePricing: true, sessionExpired: false, windowOver: false, bodyValid: true, hash: 'current' }, 'applied'],
    ['autofill: the session idling out does not matter, the window does', { token: 'valid', ...allFail, livePricing: true, context: 'autofill' }, 'window_expired'],
    ['autofill: everything in order on an expired session', { token: 'valid', livePricing: true, sessionExpired: true, windowOver: false, bodyValid: true, hash: 'current', context: 'autofill' }, 'applied'],
  ])('%s → %s', async (_, facts, expected) => {
    const { code, executed } = await outcome(facts);
    expect(code).toBe(expected);
    expect(executed).toBe(expected === 'applied' ? 1 : 0);
  });

  it.each<[string, Pick<Facts, 'hash' | 'context'>]>([
    ['for the current hash', { hash: 'current' }],
    ['for a stale hash (check 5 comes before check 6)', { hash: 'stale' }],
    ['for a submission (autofill)', { hash: 'current', context: 'autofill' }],
  ])('a breakdown priced beyond the largest amount of the currency is an invalid body %s: 422 at lineItems, nothing recorded', async (_, facts) => {
    const { access, token, body, commands } = arrange({ token: 'valid', livePricing: true, sessionExpired: false, windowOver: false, bodyValid: true, ...facts });
    // 10^6 × 10^9 EUR is 10^17 cents, past the 10^15 a JSON number holds exactly
    const tooLarge = { ...body, lineItems: [{ description: 'Window', quantity: 1_000_000, unitPrice: 1_000_000_000 }] };
    await expect(access.writeAdjustment(token, tooLarge)).rejects.toMatchObject({
      code: 'validation_error',
      fields: [{ path: 'lineItems', message: 'the price exceeds the largest amount the service handles in EUR (10000000000000.00)' }],
    });
    expect(commands.execute).not.toHaveBeenCalled();
  });

  it('records an answer on the session; an autofill answer too, for the submission, whatever the idle time', async () => {
    const session = arrange({ token: 'valid', livePricing: true, sessionExpired: false, windowOver: false, bodyValid: true, hash: 'current' });
    await expect(session.access.writeAdjustment(session.token, session.body)).resolves.toEqual({ applied: true, isCurrentConfiguration: true });
    const [[recorded]] = session.commands.execute.mock.calls as unknown as [[RecordSessionAdjustment]];
    expect(recorded).toBeInstanceOf(RecordSessionAdjustment);
    expect(recorded).toMatchObject({ sessionId: 'ses_1', configHash: CURRENT, lineItems: [{ description: 'Window', quantity: 1, unitPrice: 100 }], actor: 'pricing:evt_1', forSubmission: false });

    const autofill = arrange({ token: 'valid', livePricing: true, sessionExpired: true, windowOver: false, bodyValid: true, hash: 'current', context: 'autofill' });
    await expect(autofill.access.writeAdjustment(autofill.token, autofill.body)).resolves.toEqual({ applied: true, isCurrentConfiguration: true });
    const [[forSubmission]] = autofill.commands.execute.mock.calls as unknown as [[RecordSessionAdjustment]];
    expect(forSubmission).toBeInstanceOf(RecordSessionAdjustment);
    expect(forSubmission).toMatchObject({ sessionId: 'ses_1', configHash: CURRENT, actor: 'pricing:evt_1', forSubmission: true });
  });

  it.each<[string, Facts, string]>([
    ['reads need a valid token', { token: 'superseded', ...allFail }, 'unauthorized'],
    ['not one whose redelivery was asked for', { token: 'redelivery-asked', ...allFail, livePricing: true, windowOver: false }, 'unauthorized'],
    ['and live pricing', { token: 'valid', ...allFail }, 'forbidden_plan'],
    ['an expired session still reads, within the window', { token: 'valid', ...allFail, livePricing: true, windowOver: false }, 'read'],
    ['and after it: the window is for writes', { token: 'valid', ...allFail, livePricing: true }, 'read'],
  ])('GET: %s → %s', async (_, facts, expected) => {
    const { access, token } = arrange(facts);
    const code = await access.read(token).then(
      () => 'read',
      (error: { code: string }) => error.code,
    );
    expect(code).toBe(expected);
  });
});
