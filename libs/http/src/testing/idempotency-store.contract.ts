import { IDEMPOTENCY_CLAIM_MS, IDEMPOTENCY_TTL_MS, type IdempotencyStore, type StoredResponse } from '../idempotency';

export const t0 = 1_700_000_000_000;
export const scope = 'org:org-1 POST /api/v1/submissions/s-1/quotes';
export const created = (at: number, etag?: string): StoredResponse => ({
  bodyHash: 'hash-a',
  status: 201,
  body: '{"quoteId":"q-1"}',
  ...(etag ? { etag } : {}),
  expiresAt: at + IDEMPOTENCY_TTL_MS,
});
export const claimFor = (owner: string, at: number) => ({ owner, until: at + IDEMPOTENCY_CLAIM_MS });

/** The IdempotencyStore port's contract: what registerIdempotency relies on, whatever keeps the records. */
export function describeIdempotencyStoreContract(name: string, open: () => { store: IdempotencyStore; cleanup: () => Promise<void> }) {
  describe(`${name} (IdempotencyStore contract)`, () => {
    let store: IdempotencyStore;
    let cleanup: () => Promise<void>;
    beforeEach(() => {
      ({ store, cleanup } = open());
    });
    afterEach(() => cleanup());

    it('replays the stored response, with its ETag, until 24 hours after it was stored', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      await store.put(scope, 'k1', created(t0, '"v1"'));

      expect(await store.get(scope, 'k1', t0 + 1_000)).toEqual(created(t0, '"v1"'));
      expect(await store.get(scope, 'k1', t0 + IDEMPOTENCY_TTL_MS - 1)).toEqual(created(t0, '"v1"'));
      expect(await store.get(scope, 'k1', t0 + IDEMPOTENCY_TTL_MS)).toBeNull();
    });

    it('keeps keys apart by scope and by key', async () => {
      await store.put(scope, 'k1', created(t0));
      expect(await store.get(scope, 'k2', t0)).toBeNull();
      expect(await store.get('org:org-2 POST /api/v1/submissions/s-1/quotes', 'k1', t0)).toBeNull();
      expect(await store.claim('org:org-2 POST /api/v1/submissions/s-1/quotes', 'k1', claimFor('b', t0), t0)).toBe(true);
    });

    it("refuses another owner's claim while it is live, and grants it once the claim lapses", async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      expect(await store.claim(scope, 'k1', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(false);
      expect(await store.claim(scope, 'k1', claimFor('b', t0 + IDEMPOTENCY_CLAIM_MS - 1), t0 + IDEMPOTENCY_CLAIM_MS - 1)).toBe(false);
      expect(await store.claim(scope, 'k1', claimFor('b', t0 + IDEMPOTENCY_CLAIM_MS), t0 + IDEMPOTENCY_CLAIM_MS)).toBe(true);
    });

    it('moves the lapse of a claim its owner renews, not one another owner renews, nor a stored response', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      const renewedAt = t0 + IDEMPOTENCY_CLAIM_MS - 1;
      await store.renew(scope, 'k1', 'a', renewedAt + IDEMPOTENCY_CLAIM_MS);
      await store.renew(scope, 'k1', 'b', renewedAt + 10 * IDEMPOTENCY_CLAIM_MS);
      const pastFirstLapse = renewedAt + 1;
      expect(await store.claim(scope, 'k1', claimFor('b', pastFirstLapse), pastFirstLapse)).toBe(false);
      const pastRenewedLapse = renewedAt + IDEMPOTENCY_CLAIM_MS;
      expect(await store.claim(scope, 'k1', claimFor('b', pastRenewedLapse), pastRenewedLapse)).toBe(true);
      // b's claim now: a's late renewal does not take it back.
      await store.renew(scope, 'k1', 'a', pastRenewedLapse + 10 * IDEMPOTENCY_CLAIM_MS);
      await store.put(scope, 'k2', created(t0));
      await store.renew(scope, 'k2', 'a', t0 + 2 * IDEMPOTENCY_TTL_MS);
      expect(await store.get(scope, 'k2', t0 + IDEMPOTENCY_TTL_MS)).toBeNull();
      const later = pastRenewedLapse + IDEMPOTENCY_CLAIM_MS;
      expect(await store.claim(scope, 'k1', claimFor('c', later), later)).toBe(true);
    });

    it('frees the key when its owner releases the claim, not when another owner does', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      await store.release(scope, 'k1', 'b');
      expect(await store.claim(scope, 'k1', claimFor('b', t0), t0)).toBe(false);
      await store.release(scope, 'k1', 'a');
      expect(await store.claim(scope, 'k1', claimFor('b', t0), t0)).toBe(true);
      expect(await store.get(scope, 'k1', t0)).toBeNull();
    });

    it('refuses a claim while a response is stored, which no release removes, and grants it once the response expired', async () => {
      expect(await store.claim(scope, 'k1', claimFor('a', t0), t0)).toBe(true);
      await store.put(scope, 'k1', created(t0));
      await store.release(scope, 'k1', 'a');

      expect(await store.claim(scope, 'k1', claimFor('b', t0 + 1_000), t0 + 1_000)).toBe(false);
      expect(await store.get(scope, 'k1', t0 + 1_000)).toEqual(created(t0));
      const later = t0 + IDEMPOTENCY_TTL_MS;
      expect(await store.claim(scope, 'k1', claimFor('b', later), later)).toBe(true);
      expect(await store.get(scope, 'k1', later)).toBeNull();
    });
  });
}
