import { randomBytes } from 'node:crypto';
import type { CommandBus } from '@nestjs/cqrs';
import type { OrganizationDirectory } from '@lib/organizations';
import type { ReadStore } from '@lib/read-store';
import { loadConfig, ManualClock } from '@lib/shared';
import { NotReadyToSend } from '@lib/webhooks';
import { CapabilityTokens, hashCapabilityToken } from '../domain/capability-token';
import { PRICING_GRANTS } from '../projections/pricing-grants.projection';
import { PricingCallbackFinalizer } from './pricing-callback.finalizer';

describe('PricingCallbackFinalizer', () => {
  const tokens = new CapabilityTokens(randomBytes(32));
  const delivery = {
    id: 'evt_1',
    organizationId: 'org_1',
    generation: 1,
    payload: { data: { context: 'configuration', configHash: 'sha256:abc', session: { id: 'ses_1' } } },
  };
  /** A read side that has the token's grant once `visible` is set (the projector in another process caught up). */
  function finalizerWith(reads: { visible: boolean }) {
    const store = { get: async (collection: string, id: string) => (collection === PRICING_GRANTS && reads.visible && id === hashCapabilityToken(tokens.derive('evt_1', 1)) ? { id } : null) };
    const commands = { execute: async () => undefined };
    const organizations = { get: async () => ({ settings: { pricingTimeoutMs: 3_000 } }) };
    return new PricingCallbackFinalizer(
      tokens,
      commands as unknown as CommandBus,
      organizations as unknown as OrganizationDirectory,
      store as unknown as ReadStore,
      new ManualClock(0),
      loadConfig({}),
    );
  }

  afterEach(() => jest.useRealTimers());

  it('adds the callback once the token is checkable by the read side', async () => {
    const finalized = await finalizerWith({ visible: true }).finalize(delivery);
    expect(finalized.data).toMatchObject({ callback: { url: expect.stringMatching(/\/configuration-sessions\/pct_[^/]+\/adjustments$/), timeoutMs: 3_000, generation: 1 } });
  });

  it('says it is not ready to send, rather than failing the attempt, when the read side does not show the token in time', async () => {
    jest.useFakeTimers();
    const finalizing = finalizerWith({ visible: false }).finalize(delivery);
    const settled = finalizing.then(
      () => 'finalized',
      (error: unknown) => error,
    );
    await jest.advanceTimersByTimeAsync(5_100);
    const error = await settled;
    expect(error).toBeInstanceOf(NotReadyToSend);
  });
});
