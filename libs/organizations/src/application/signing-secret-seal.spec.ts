import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { describeKeyLoader } from '@lib/shared/testing/key-loader.contract';
import { newSigningSecret } from './organization.commands';
import { loadSigningSecretKey, SealedSecretUnreadable, SIGNING_SECRET_KEY_FILE, SigningSecretSeal } from './signing-secret-seal';

describeKeyLoader('the signing-secret key', loadSigningSecretKey, 'SIGNING_SECRET_KEY', SIGNING_SECRET_KEY_FILE);

describe('a sealed signing secret', () => {
  const ref = { organizationId: 'org_1', secretId: 'whs_1' };
  const seal = new SigningSecretSeal(randomBytes(32));
  const secret = newSigningSecret();

  afterEach(() => jest.restoreAllMocks());

  it('holds nothing of the secret, differs each time, and opens to the secret with the same key', () => {
    const sealed = seal.seal(secret, ref);
    expect(sealed).not.toContain('whsec_');
    expect(sealed).not.toContain(secret.slice('whsec_'.length, 20));
    expect(seal.seal(secret, ref)).not.toBe(sealed);
    expect(seal.unseal(sealed, ref)).toBe(secret);
    expect(seal.open(sealed, ref)).toBe(secret);
  });

  it('opens with another process holding the same key (a shared file or SIGNING_SECRET_KEY)', () => {
    const key = Buffer.from('k'.repeat(40));
    expect(new SigningSecretSeal(key).unseal(new SigningSecretSeal(key).seal(secret, ref), ref)).toBe(secret);
  });

  it('does not open with another key, nor for another secret or organization, nor once altered', () => {
    const sealed = seal.seal(secret, ref);
    expect(() => new SigningSecretSeal(randomBytes(32)).unseal(sealed, ref)).toThrow(new SealedSecretUnreadable('other_key'));
    expect(() => seal.unseal(sealed, { ...ref, secretId: 'whs_2' })).toThrow(new SealedSecretUnreadable('damaged'));
    expect(() => seal.unseal(sealed, { ...ref, organizationId: 'org_2' })).toThrow(new SealedSecretUnreadable('damaged'));
    const payload = Buffer.from(sealed.split('.')[2], 'base64url');
    payload[payload.length - 1] ^= 1;
    const altered = [...sealed.split('.').slice(0, 2), payload.toString('base64url')].join('.');
    expect(() => seal.unseal(altered, ref)).toThrow(new SealedSecretUnreadable('damaged'));
    expect(() => seal.unseal('not sealed', ref)).toThrow(new SealedSecretUnreadable('damaged'));
  });

  it('given a secret this key cannot open, then open answers null and logs what to do once, not on every attempt', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const foreign = new SigningSecretSeal(randomBytes(32)).seal(secret, ref);
    for (let attempt = 0; attempt < 3; attempt++) expect(seal.open(foreign, ref)).toBeNull();
    expect(error).toHaveBeenCalledTimes(1);
    const [message] = error.mock.calls[0] as [string];
    expect(message).toContain('whs_1');
    expect(message).toContain('org_1');
    expect(message).toContain('SIGNING_SECRET_KEY');
    expect(message).toContain('SIGNING_SECRET_PREVIOUS_KEYS');
    expect(message).toContain('no_signing_secret');
    expect(message).toContain('POST /admin/v1/organizations/org_1/signing-secret');
  });
});

describe('a signing-secret key replaced by another', () => {
  const ref = { organizationId: 'org_1', secretId: 'whs_1' };
  const keyA = Buffer.from('a'.repeat(40));
  const keyB = Buffer.from('b'.repeat(40));
  const secret = newSigningSecret();
  const sealedUnderA = new SigningSecretSeal(keyA).seal(secret, ref);

  afterEach(() => jest.restoreAllMocks());

  it('given B current and A previous, then a secret sealed under A opens, and so does one sealed under B', () => {
    const ring = new SigningSecretSeal(keyB, [Buffer.from('c'.repeat(40)), keyA]);
    expect(ring.unseal(sealedUnderA, ref)).toBe(secret);
    expect(ring.open(sealedUnderA, ref)).toBe(secret);
    expect(ring.unseal(new SigningSecretSeal(keyB).seal(secret, ref), ref)).toBe(secret);
  });

  it('given B alone, then a secret sealed under A does not open: it names another key', () => {
    expect(() => new SigningSecretSeal(keyB).unseal(sealedUnderA, ref)).toThrow(new SealedSecretUnreadable('other_key'));
  });

  it('given B current and A previous, then new secrets are sealed under B: B alone opens them, A alone does not', () => {
    const sealed = new SigningSecretSeal(keyB, [keyA]).seal(secret, ref);
    expect(new SigningSecretSeal(keyB).unseal(sealed, ref)).toBe(secret);
    expect(() => new SigningSecretSeal(keyA).unseal(sealed, ref)).toThrow(new SealedSecretUnreadable('other_key'));
  });

  it('given a previous key, then a value sealed for another secret still does not open', () => {
    expect(() => new SigningSecretSeal(keyB, [keyA]).unseal(sealedUnderA, { ...ref, secretId: 'whs_2' })).toThrow(new SealedSecretUnreadable('damaged'));
  });
});
