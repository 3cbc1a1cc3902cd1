import { fold } from '@lib/event-sourcing';
import { ConcurrentModification, NotFound, ValidationFailed } from '@lib/shared';
import type { SubmissionCustomer } from '@lib/submissions';
import { configHash, priceConfiguration, validateConfiguration, validateTemplate, type Configuration } from '@lib/templates';
import { exampleConfigurationInput, exampleTemplateBody } from '@lib/templates/domain/example.fixture';
import { ADJUSTMENTS_KEPT, currentAdjustment } from './session-adjustments';
import { isIdleExpired, sessionDecider, sessionStatus, type SessionCommand } from './session.decider';
import { SessionAlreadySubmitted, SessionExpired, SessionNotConfigured, StaleConfigHash } from './session.errors';
import type { PricingTokenGrant, SessionEvent } from './session.events';

const TTL = 60_000;
const template = validateTemplate(exampleTemplateBody()).template!;
const configuration = validateConfiguration(template, exampleConfigurationInput()).configuration!;
const hash = configHash(configuration);
const pricing = priceConfiguration(template, 'tpl_1', configuration, 'EUR');
const wider: Configuration = { ...configuration, width: 1300 };
const widerHash = configHash(wider);
const widerPricing = priceConfiguration(template, 'tpl_1', wider, 'EUR');
const customer: SubmissionCustomer = { name: 'Ada', email: 'ada@example.com', phone: null, companyName: null, address: null, postalCode: null, city: null, country: null };

const ids = { organizationId: 'org_a', sessionId: 'ses_1' };
const started: SessionEvent = {
  type: 'session.v1.started',
  data: { ...ids, templateId: 'tpl_1', origin: 'storefront', locale: 'en', customerTokenHash: 'ab'.repeat(32), at: 1_000 },
};
const configured: SessionEvent = {
  type: 'session.v1.configurationChanged',
  data: { ...ids, templateId: 'tpl_1', locale: 'en', configuration, configHash: hash, previousConfigHash: null, basePricing: pricing, at: 2_000 },
};
const lines = [{ description: 'Window, all in', quantity: 1, unitPrice: 700, total: 700, itemType: 'window' }];
const adjusted: SessionEvent = { type: 'session.v1.adjustmentReceived', data: { ...ids, configHash: hash, lineItems: lines, subtotal: 700, at: 2_500, currency: 'EUR' } };
const submitted: SessionEvent = {
  type: 'session.v1.submitted',
  data: { ...ids, templateId: 'tpl_1', submissionId: 'sub_1', customer, configuration, configHash: hash, basePricing: pricing, currency: 'EUR', livePricing: true, externalPricing: null, at: 3_000 },
};

function errorOf(act: () => unknown): Error {
  try {
    act();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the command to be refused');
}

function when(given: SessionEvent[], command: SessionCommand): SessionEvent[] {
  return sessionDecider.decide(command, fold(sessionDecider, given));
}

const configure = (at: number, c = wider, h = widerHash, p = widerPricing): SessionCommand => ({
  type: 'changeConfiguration', configuration: c, configHash: h, basePricing: p, at, idleTtlMs: TTL,
});
const submit = (at: number, h = hash, livePricing = true, currency = 'EUR'): SessionCommand => ({ type: 'submitSession', submissionId: 'sub_1', customer, configHash: h, basePricing: pricing, currency, livePricing, at, idleTtlMs: TTL });
const adjust = (at: number, h = hash): SessionCommand => ({ type: 'recordAdjustment', configHash: h, lineItems: lines, subtotal: 700, currency: 'EUR', at, idleTtlMs: TTL });

describe('session decider', () => {
  describe('given no session', () => {
    it('when it is started, then session.v1.started records the token hash, never the token', () => {
      const { data } = started as Extract<SessionEvent, { type: 'session.v1.started' }>;
      expect(when([], { type: 'startSession', ...data })).toEqual([started]);
    });

    it('when it is configured, then it is not found', () => {
      expect(() => when([], configure(2_000))).toThrow(NotFound);
    });
  });

  describe('given a started session', () => {
    it('when a configuration is saved, then configurationChanged carries it, its hash and price, with no previous hash', () => {
      expect(when([started], configure(2_000, configuration, hash, pricing))).toEqual([configured]);
    });

    it('when it is submitted, then it needs a configuration first (422 on the configuration path)', () => {
      const error = errorOf(() => when([started], submit(2_000)));
      expect(error).toBeInstanceOf(SessionNotConfigured);
      expect((error as ValidationFailed).fields).toEqual([expect.objectContaining({ path: 'configuration' })]);
    });

    it('when it is written after the idle limit, then it has expired', () => {
      expect(() => when([started], configure(1_000 + TTL + 1))).toThrow(SessionExpired);
    });

    it('when it is written exactly at the idle limit, then it still accepts the write', () => {
      expect(when([started], configure(1_000 + TTL))).toHaveLength(1);
    });
  });

  describe('given a configured session', () => {
    it('when the same configuration is saved again, then nothing is recorded', () => {
      expect(when([started, configured], configure(2_500, configuration, hash, pricing))).toEqual([]);
    });

    it('when the same configuration is saved again after the template changed its price, then the new base price is recorded under the same hash', () => {
      const dearer = { ...pricing, lineItems: pricing.lineItems.map((line, i) => (i === 0 ? { ...line, unitPrice: 100, total: 100 } : line)), subtotal: pricing.subtotal + 50 };
      const [event] = when([started, configured], configure(2_500, configuration, hash, dearer));
      expect(event).toMatchObject({ type: 'session.v1.configurationChanged', data: { configHash: hash, previousConfigHash: hash, basePricing: dearer, at: 2_500 } });
      // Stored and read back, the same price is nothing new.
      expect(when([started, configured, event], configure(3_000, configuration, hash, JSON.parse(JSON.stringify(dearer))))).toEqual([]);
    });

    it('when another configuration is saved, then the event names the previous hash', () => {
      const [event] = when([started, configured], configure(2_500));
      expect(event).toMatchObject({ type: 'session.v1.configurationChanged', data: { configHash: widerHash, previousConfigHash: hash, at: 2_500 } });
    });

    it('when an adjustment for the current hash arrives, then it is recorded', () => {
      expect(when([started, configured], adjust(2_500))).toEqual([adjusted]);
    });

    it('when an adjustment for another hash arrives, then it is stale and names the current hash', () => {
      const error = errorOf(() => when([started, configured], adjust(2_500, widerHash)));
      expect(error).toBeInstanceOf(StaleConfigHash);
      expect((error as StaleConfigHash).details).toEqual({ currentConfigHash: hash });
    });

    it('when it is submitted without an adjustment, then nothing is frozen', () => {
      expect(when([started, configured], submit(3_000))).toEqual([submitted]);
    });

    it('when it is submitted while the configuration changed since it was priced, then it is a conflict', () => {
      expect(() => when([started, configured], submit(3_000, widerHash))).toThrow(ConcurrentModification);
    });
  });

  describe('given an adjustment for the current configuration', () => {
    it('when it is submitted, then the adjustment is frozen onto the submission', () => {
      const [event] = when([started, configured, adjusted], submit(3_000));
      expect(event).toMatchObject({ type: 'session.v1.submitted', data: { externalPricing: { configHash: hash, lineItems: lines, subtotal: 700, receivedAt: 2_500 } } });
    });

    it('when it is submitted after the organization switched live pricing off, then no adjustment is frozen: the base price stands', () => {
      const [event] = when([started, configured, adjusted], submit(3_000, hash, false));
      expect(event).toMatchObject({ type: 'session.v1.submitted', data: { externalPricing: null } });
    });

    it('when it is submitted in another currency than the adjustment was priced in (the organization changed it), then no adjustment is frozen', () => {
      const [event] = when([started, configured, adjusted], submit(3_000, hash, true, 'USD'));
      expect(event).toMatchObject({ type: 'session.v1.submitted', data: { currency: 'USD', externalPricing: null } });
    });

    it('when an adjustment recorded before currencies were (no currency) is submitted, then it is frozen as before', () => {
      const { currency: _currency, ...unmarked } = (adjusted as Extract<SessionEvent, { type: 'session.v1.adjustmentReceived' }>).data;
      const [event] = when([started, configured, { type: 'session.v1.adjustmentReceived', data: unmarked }], submit(3_000, hash, true, 'USD'));
      expect(event).toMatchObject({ data: { externalPricing: { configHash: hash, subtotal: 700 } } });
      expect(Object.keys((event as Extract<SessionEvent, { type: 'session.v1.submitted' }>).data.externalPricing!).sort()).toEqual(['configHash', 'lineItems', 'receivedAt', 'subtotal']);
    });

    it('when the configuration changes and then it is submitted, then the old adjustment is not frozen', () => {
      const changed = when([started, configured, adjusted], configure(2_600));
      const [event] = when([started, configured, adjusted, ...changed], submit(3_000, widerHash));
      expect(event).toMatchObject({ type: 'session.v1.submitted', data: { configHash: widerHash, externalPricing: null } });
    });

    it('when the customer changes the configuration, it is priced, and the customer goes back, then the first answer is frozen again', () => {
      const toWider = when([started, configured, adjusted], configure(2_600));
      const widerLines = [{ description: 'Wider window, all in', quantity: 1, unitPrice: 800, total: 800, itemType: 'window' }];
      const widerAdjusted: SessionEvent = { type: 'session.v1.adjustmentReceived', data: { ...ids, configHash: widerHash, lineItems: widerLines, subtotal: 800, at: 2_700 } };
      const given = [started, configured, adjusted, ...toWider, widerAdjusted];
      const back = when(given, configure(2_800, configuration, hash, pricing));
      const [event] = when([...given, ...back], submit(3_000));
      expect(event).toMatchObject({ type: 'session.v1.submitted', data: { configHash: hash, externalPricing: { configHash: hash, lineItems: lines, subtotal: 700, receivedAt: 2_500 } } });
    });

    it('when the partner writes the same hash again, then the latest write is frozen', () => {
      const again: SessionEvent = { type: 'session.v1.adjustmentReceived', data: { ...ids, configHash: hash, lineItems: lines, subtotal: 650, at: 2_600 } };
      const [event] = when([started, configured, adjusted, again], submit(3_000));
      expect(event).toMatchObject({ data: { externalPricing: { subtotal: 650, receivedAt: 2_600 } } });
    });

    it('when it is submitted, then the frozen items are in display order (sorted by sortOffset when every item has one)', () => {
      const item = (description: string, sortOffset?: number) => ({ description, quantity: 1, unitPrice: 1, total: 1, itemType: 'other', ...(sortOffset !== undefined && { sortOffset }) });
      const frozenOrder = (lineItems: ReturnType<typeof item>[]) => {
        const written: SessionEvent = { type: 'session.v1.adjustmentReceived', data: { ...ids, configHash: hash, lineItems, subtotal: lineItems.length, at: 2_500 } };
        const [event] = when([started, configured, written], submit(3_000));
        return (event as Extract<SessionEvent, { type: 'session.v1.submitted' }>).data.externalPricing!.lineItems.map((l) => l.description);
      };
      expect(frozenOrder([item('c', 20), item('a', 0), item('b', 10), item('b2', 10)])).toEqual(['a', 'b', 'b2', 'c']);
      expect(frozenOrder([item('c', 20), item('a'), item('b', 10)])).toEqual(['c', 'a', 'b']);
    });

    it('then adjustments do not count as customer activity', () => {
      // configured at 2_000, adjusted at 2_500: the idle time still runs from 2_000
      expect(() => when([started, configured, adjusted], configure(2_000 + TTL + 1))).toThrow(SessionExpired);
    });
  });

  describe('given a submitted session', () => {
    it('when the configuration is changed, then it is refused as already submitted', () => {
      expect(() => when([started, configured, submitted], configure(3_500))).toThrow(SessionAlreadySubmitted);
    });

    it('when it is submitted again, then it is refused and names the submission', () => {
      const error = errorOf(() => when([started, configured, submitted], submit(3_500)));
      expect(error).toBeInstanceOf(SessionAlreadySubmitted);
      expect((error as SessionAlreadySubmitted).details).toEqual({ submissionId: 'sub_1' });
    });

    it('when an adjustment for the final hash arrives, then it is still recorded (it freezes late)', () => {
      expect(when([started, configured, submitted], adjust(3_500))).toHaveLength(1);
    });

    it('when it is written after the idle limit, then expiry wins', () => {
      expect(() => when([started, configured, submitted], configure(3_000 + TTL + 1))).toThrow(SessionExpired);
      expect(() => when([started, configured, submitted], adjust(3_000 + TTL + 1))).toThrow(SessionExpired);
    });

    it('when an auto-fill answer for the submission arrives after the idle limit, then it is recorded: a submission never idles out', () => {
      expect(when([started, configured, submitted], { ...adjust(3_000 + TTL + 1), forSubmission: true } as SessionCommand)).toHaveLength(1);
      expect(() => when([started, configured, submitted], { ...adjust(3_000 + TTL + 1, widerHash), forSubmission: true } as SessionCommand)).toThrow(StaleConfigHash);
    });
  });

  describe('given a configured session and a pricing event to send', () => {
    const grant: PricingTokenGrant = { tokenHash: 'ab'.repeat(32), configHash: hash, context: 'configuration', submissionId: null, deliveryId: 'evt_1', generation: 1, issuedAt: 2_100, expiresAt: 602_100 };
    const issue = (overrides: Partial<PricingTokenGrant> = {}): SessionCommand => ({ type: 'issuePricingToken', ...grant, ...overrides });
    const issued: SessionEvent = { type: 'session.v1.pricingTokenIssued', data: { ...ids, ...grant } };

    it('when a token is issued, then only its hash is recorded, with its configHash and window', () => {
      expect(when([started, configured], issue())).toEqual([issued]);
    });
    it('when the same delivery generation is attempted again, then nothing new is recorded (the first window stands)', () => {
      expect(when([started, configured, issued], issue({ issuedAt: 9_000, expiresAt: 609_000 }))).toEqual([]);
    });
    it('when the delivery is redelivered, then the next generation is recorded', () => {
      expect(when([started, configured, issued], issue({ generation: 2, tokenHash: 'cd'.repeat(32) }))).toEqual([
        { type: 'session.v1.pricingTokenIssued', data: { ...ids, ...grant, generation: 2, tokenHash: 'cd'.repeat(32) } },
      ]);
    });
    it('when another delivery of the same session sends one, then it is recorded too', () => {
      expect(when([started, configured, issued], issue({ deliveryId: 'evt_2' }))).toHaveLength(1);
    });
    it('then a token is not customer activity, and is issued even on an expired session (auto-fill answers for the submission)', () => {
      const afterSubmit = [started, configured, submitted, issued];
      expect(() => when(afterSubmit, configure(3_000 + TTL + 1))).toThrow(SessionExpired);
      expect(when([started, configured, submitted], issue({ context: 'autofill', submissionId: 'sub_1', issuedAt: 3_000 + TTL + 5 }))).toHaveLength(1);
    });
  });

  describe('derived state', () => {
    it('a session is expired only when idle for more than the limit', () => {
      expect(isIdleExpired(1_000, 1_000 + TTL, TTL)).toBe(false);
      expect(sessionStatus('submitted', 1_000, 1_000 + TTL + 1, TTL)).toBe('expired');
      expect(sessionStatus('active', 1_000, 1_500, TTL)).toBe('active');
    });

    it('an adjustment counts only for the hash it was written for', () => {
      const adjustment = { configHash: hash, lineItems: lines, subtotal: 700, receivedAt: 2_500 };
      expect(currentAdjustment([adjustment], hash)).toBe(adjustment);
      expect(currentAdjustment([adjustment], widerHash)).toBeNull();
      expect(currentAdjustment([], hash)).toBeNull();
      expect(currentAdjustment([adjustment], null)).toBeNull();
    });

    it('adjustments are kept for the most recently written hashes only', () => {
      const events: SessionEvent[] = [started];
      for (let n = 0; n <= ADJUSTMENTS_KEPT; n++) {
        const h = `sha256:${n}`;
        events.push(
          { type: 'session.v1.configurationChanged', data: { ...ids, templateId: 'tpl_1', locale: 'en', configuration, configHash: h, previousConfigHash: null, basePricing: pricing, at: 2_000 + n } },
          { type: 'session.v1.adjustmentReceived', data: { ...ids, configHash: h, lineItems: lines, subtotal: n, at: 2_000 + n } },
        );
      }
      const state = fold(sessionDecider, events);
      expect(state.adjustments).toHaveLength(ADJUSTMENTS_KEPT);
      expect(currentAdjustment(state.adjustments, 'sha256:0')).toBeNull();
      expect(currentAdjustment(state.adjustments, 'sha256:1')).toMatchObject({ subtotal: 1 });
      expect(currentAdjustment(state.adjustments, `sha256:${ADJUSTMENTS_KEPT}`)).toMatchObject({ subtotal: ADJUSTMENTS_KEPT });
    });
  });
});
