import { redactText, redactUrl } from './redaction';

describe('redactUrl', () => {
  it.each([
    ['/api/v1/configuration-sessions/tok.abc.def/adjustments', '/api/v1/configuration-sessions/[redacted]/adjustments'],
    ['/api/v1/configuration-sessions/tok.abc.def', '/api/v1/configuration-sessions/[redacted]'],
    ['/storefront/v1/quotes/AbC123xyz/accept', '/storefront/v1/quotes/[redacted]/accept'],
    ['/q/AbC123xyz?lang=de', '/q/[redacted]?lang=de'],
    ['/storefront/v1/sessions/ses_1/stream?token=cst_secret&x=1', '/storefront/v1/sessions/ses_1/stream?token=[redacted]&x=1'],
  ])('hides the capability token of %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('leaves ordinary URLs as they are', () => {
    expect(redactUrl('/api/v1/quotes/quo_123?limit=50&cursor=abc')).toBe('/api/v1/quotes/quo_123?limit=50&cursor=abc');
    expect(redactUrl('/q/')).toBe('/q/');
  });
});

describe('redactText', () => {
  it('hides keys, tokens and secrets quoted in a message', () => {
    const message =
      'calling https://partner.example/api/v1/configuration-sessions/tok.SECRET1/adjustments with Bearer qk_live_abcdef0123456789 ' +
      'admin adm_0123456789abcdef secret whsec_c2VjcmV0 customer cst_ABCdef123 and https://x.example/hook?token=SECRET2&a=1';
    const redacted = redactText(message);
    for (const secret of ['SECRET1', 'qk_live_abcdef0123456789', 'adm_0123456789abcdef', 'whsec_c2VjcmV0', 'cst_ABCdef123', 'SECRET2']) {
      expect(redacted).not.toContain(secret);
    }
    expect(redacted).toContain('/api/v1/configuration-sessions/[redacted]/adjustments');
    expect(redacted).toContain('&a=1');
  });

  it.each([
    ['auth BEARER abc.def failed', 'abc.def'],
    ['key qk_live_abc0123', 'qk_live_abc0123'],
    ['admin adm_x9', 'adm_x9'],
    ['customer cst_Z9', 'cst_Z9'],
    ['secret whsec_AAA=', 'whsec_AAA'],
    ['at /q/AbC123xyz now', 'AbC123xyz'],
    ['hook https://x.example/h?signature=s1gn', 's1gn'],
  ])('hides the one secret of %j', (message, secret) => {
    expect(redactText(message)).not.toContain(secret);
  });

  it('keeps a message without secrets unchanged', () => {
    expect(redactText('request completed')).toBe('request completed');
    expect(redactText('delivery evt_1 failed: HTTP 500')).toBe('delivery evt_1 failed: HTTP 500');
  });
});
