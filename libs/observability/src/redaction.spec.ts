import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { redactLogText, redactText, redactUrl } from './redaction';

/** A pricing capability token as the pricing loop issues them: `pct_` + 43 base64url characters. */
const PCT = `pct_${'Ab3-Xy9_Qz'.repeat(4)}k0-`;

/** Paths the router hands to a token route although they do not start with its prefix as written. */
const ROUTED_ELSEWISE: Array<[string, string, string]> = [
  ['GET', '/storefront/v1/%71uotes/AbC123xyz', '/storefront/v1/%71uotes/[redacted]'],
  ['GET', '/%71/AbC123xyz', '/%71/[redacted]'],
  ['PUT', `/api/v1/%63onfiguration-sessions/${PCT}/adjustments`, '/api/v1/%63onfiguration-sessions/[redacted]/adjustments'],
  // Hex digits in either case, and escapes in every segment of the prefix.
  ['GET', '/storefront/v1/qu%6ftes/AbC123xyz/accept', '/storefront/v1/qu%6ftes/[redacted]/accept'],
  ['PUT', `/api/v1/c%6Fnfiguration%2dsessions/${PCT}/adjustments`, '/api/v1/c%6Fnfiguration%2dsessions/[redacted]/adjustments'],
  ['GET', '/%73torefront/%76%31/%71%75%6F%74%65%73/AbC123xyz', '/%73torefront/%76%31/%71%75%6F%74%65%73/[redacted]'],
  // The query is redacted as before.
  ['GET', '/%71/AbC123xyz?lang=de&token=cst_secret', '/%71/[redacted]?lang=de&token=[redacted]'],
  // An absolute-form request target: the router drops scheme and host.
  ['GET', 'http://gateway.example/q/AbC123xyz?lang=de', 'http://gateway.example/q/[redacted]?lang=de'],
];

/** A customer quote token as libs/quotes mints them: 43 base62 characters, no prefix. */
const QUOTE_TOKEN = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ABCDEFG';

/** Paths with a working quote token that no route matches (404): logged all the same. */
const UNMATCHED: Array<[string, string]> = [
  [`//q/${QUOTE_TOKEN}`, '//q/[redacted]'],
  [`/q//${QUOTE_TOKEN}`, '/q//[redacted]'],
  [`/./q/${QUOTE_TOKEN}`, '/./q/[redacted]'],
  [`/Q/${QUOTE_TOKEN}?lang=de`, '/Q/[redacted]?lang=de'],
  [`/storefront//v1/quotes/${QUOTE_TOKEN}/accept`, '/storefront//v1/quotes/[redacted]/accept'],
  [`/storefront/v1/../v1/quotes/${QUOTE_TOKEN}`, '/storefront/v1/../v1/quotes/[redacted]'],
  [`/storefront/v1/QUOTES/${QUOTE_TOKEN}.pdf`, '/storefront/v1/QUOTES/[redacted]'],
  [`/nowhere/%41${QUOTE_TOKEN.slice(1)}`, '/nowhere/[redacted]'],
  [`/nowhere?quote=${QUOTE_TOKEN}`, '/nowhere?quote=[redacted]'],
];

describe('redactUrl', () => {
  it('hides the e-mail address a contact list is filtered by, and keeps the other parameters', () => {
    expect(redactUrl('/api/v1/contacts?email=ada%40example.com&limit=5')).toBe('/api/v1/contacts?email=[redacted]&limit=5');
    expect(redactUrl('/api/v1/contacts?email%5B%5D=bob%40example.com')).toBe('/api/v1/contacts?email%5B%5D=[redacted]');
    expect(redactUrl('/api/v1/contacts?EMAIL[$eq]=bob%40example.com&emailing=1')).toBe('/api/v1/contacts?EMAIL[$eq]=[redacted]&emailing=1');
  });

  it.each([
    ['/api/v1/configuration-sessions/tok.abc.def/adjustments', '/api/v1/configuration-sessions/[redacted]/adjustments'],
    ['/api/v1/configuration-sessions/tok.abc.def', '/api/v1/configuration-sessions/[redacted]'],
    ['/storefront/v1/quotes/AbC123xyz/accept', '/storefront/v1/quotes/[redacted]/accept'],
    ['/q/AbC123xyz?lang=de', '/q/[redacted]?lang=de'],
    ['/storefront/v1/sessions/ses_1/stream?token=cst_secret&x=1', '/storefront/v1/sessions/ses_1/stream?token=[redacted]&x=1'],
    ['/callback?client_secret=s3&page=2&x-api-key=k9', '/callback?client_secret=[redacted]&page=2&x-api-key=[redacted]'],
    ['/api/v1/quotes?accessToken=qwerty12345&clientSecret=hunter2&authToken=zzz&country_code=NL', '/api/v1/quotes?accessToken=[redacted]&clientSecret=[redacted]&authToken=[redacted]&country_code=NL'],
    [
      '/x?auth_code=A1&access_code=A2&verification_code=A3&authCode=A4&x-session=A5&accesskey=A6&authtoken=A7&passcode=A8&clientsecret=A9&api_key%5B%5D=B1&auth%5Btoken%5D=B2&apiKeyValue=B3&postal_code=1011&promo-code=W',
      '/x?auth_code=[redacted]&access_code=[redacted]&verification_code=[redacted]&authCode=[redacted]&x-session=[redacted]&accesskey=[redacted]&authtoken=[redacted]&passcode=[redacted]&clientsecret=[redacted]&api_key%5B%5D=[redacted]&auth%5Btoken%5D=[redacted]&apiKeyValue=[redacted]&postal_code=1011&promo-code=W',
    ],
  ])('hides the capability token of %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each(ROUTED_ELSEWISE)('hides the capability token of %s %s, which the router decodes before routing', (_method, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('hides the token segment of a path with malformed percent-encoding, without throwing', () => {
    expect(redactUrl('/storefront/v1/%71uotes/AbC123xyz%E0%A4%A')).toBe('/storefront/v1/%71uotes/[redacted]');
    expect(redactUrl('/%71/%E0%A4%A')).toBe('/%71/[redacted]');
    expect(redactUrl(`/api/v1/%63onfiguration-sessions/${PCT}/adjustments%E0%A4%A?token=x`)).toBe(
      '/api/v1/%63onfiguration-sessions/[redacted]/adjustments%E0%A4%A?token=[redacted]',
    );
  });

  it('hides the token of every URL the router routes to a token route', async () => {
    const fastify = Fastify({ routerOptions: { maxParamLength: 2048 } });
    const routed: string[] = [];
    const handler = async (request: { params: unknown }) => (routed.push((request.params as { token: string }).token), {});
    fastify.get('/storefront/v1/quotes/:token', handler);
    fastify.get('/storefront/v1/quotes/:token/accept', handler);
    fastify.get('/q/:token', handler);
    fastify.put('/api/v1/configuration-sessions/:token/adjustments', handler);
    try {
      for (const [method, url] of ROUTED_ELSEWISE.filter(([, url]) => url.startsWith('/'))) {
        routed.length = 0;
        const res = await fastify.inject({ method: method as 'GET' | 'PUT', url });
        expect([url, res.statusCode]).toEqual([url, 200]);
        expect(routed).toHaveLength(1);
        expect(redactUrl(url)).not.toContain(routed[0]);
      }
    } finally {
      await fastify.close();
    }
  });

  it.each(UNMATCHED)('hides the quote token of %s, which no route matches', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('hides the quote token of paths the router answers with 404', async () => {
    const fastify = Fastify({ routerOptions: { maxParamLength: 2048 } });
    fastify.get('/storefront/v1/quotes/:token', async () => ({}));
    fastify.get('/storefront/v1/quotes/:token/accept', async () => ({}));
    fastify.get('/q/:token', async () => ({}));
    // Over a socket, the path as written: the injector and URL strings resolve dot segments first.
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    const { port } = fastify.server.address() as AddressInfo;
    const statusOf = (path: string) => new Promise<number | undefined>((resolve, reject) => get({ host: '127.0.0.1', port, path }, (res) => resolve(res.resume().statusCode)).on('error', reject));
    try {
      for (const [url] of UNMATCHED) {
        expect([url, await statusOf(url)]).toEqual([url, 404]);
        expect(redactUrl(url)).not.toContain(QUOTE_TOKEN.slice(1));
      }
    } finally {
      await fastify.close();
    }
  });

  it.each([
    ['/api/v1/quotes/qk_live_ki5dHaK7HfdFz1K7SajdIdusdBBzRYjC8AZof7mf', '/api/v1/quotes/[redacted]'],
    ['/nope/qk_live_abc/more', '/nope/[redacted]/more'],
    ['/api/v1/quotes/qk%5Flive%5Fabc', '/api/v1/quotes/[redacted]'],
    ['/api/v1/contacts?search=whsec_abc&limit=5', '/api/v1/contacts?search=[redacted]&limit=5'],
    ['/api/v1/contacts?adm_secret123', '/api/v1/contacts?[redacted]'],
    ['/storefront/v1/sessions/cst_abc/stream', '/storefront/v1/sessions/[redacted]/stream'],
  ])('hides a key or secret pasted anywhere into the URL: %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('leaves ordinary URLs as they are', () => {
    expect(redactUrl('/api/v1/quotes/quo_123?limit=50&cursor=abc')).toBe('/api/v1/quotes/quo_123?limit=50&cursor=abc');
    expect(redactUrl('/q/')).toBe('/q/');
    expect(redactUrl('/api/v1/quotes/quo%5F123/%E0%A4%A')).toBe('/api/v1/quotes/quo%5F123/%E0%A4%A');
    expect(redactUrl('http://gateway.example?token=cst_secret')).toBe('http://gateway.example?token=[redacted]');
    // Alphanumeric runs other than 43 characters: ids, hex hashes.
    const hash = 'ab12'.repeat(16);
    expect(redactUrl(`/api/v1/quotes/quo_000Vc7uipe8BU2hZn2bQcCvI/v/${hash}?after=${hash}`)).toBe(`/api/v1/quotes/quo_000Vc7uipe8BU2hZn2bQcCvI/v/${hash}?after=${hash}`);
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
    [`pricing callback for session ${PCT} expired`, PCT],
    [`{"token":"${PCT}"}`, PCT],
    ['secret whsec_AAA=', 'whsec_AAA'],
    ['at /q/AbC123xyz now', 'AbC123xyz'],
    [`no quote for token ${QUOTE_TOKEN}.`, QUOTE_TOKEN],
    [`opened https://quotes.example/Q/${QUOTE_TOKEN}`, QUOTE_TOKEN],
    ['hook https://x.example/h?signature=s1gn', 's1gn'],
    ['hook https://fn.azurewebsites.net/api/h?code=AzFnKey0123==&x=1', 'AzFnKey0123'],
    ['hook https://x.example/h?a=1&client_secret=cs_987', 'cs_987'],
    ['hook https://x.example/h?password=Pw123456', 'Pw123456'],
    ['blob https://acct.blob.core.windows.net/c/f?sv=2024&sig=abcdef0123', 'abcdef0123'],
    ['hook https://x.example/h?x-api-key=k3y9', 'k3y9'],
    ['note: see https://admin:Sup3rS3cretPass@crm.example.com/x', 'Sup3rS3cretPass'],
    ['hook https://crm.example.com/hook?accessToken=AT_live_998877', 'AT_live_998877'],
    ['hook https://crm.example.com/hook?a=1&clientSecret=hunter2', 'hunter2'],
    ['db postgres://admin:p@ss@db/x', 'ss@db'],
  ])('hides the one secret of %j', (message, secret) => {
    expect(redactText(message)).not.toContain(secret);
  });

  it('keeps the parts of a URL that hold no credential', () => {
    expect(redactText('https://admin:Pw@crm.example.com/x?page=2&zipcode=1234&client_secret=s')).toBe('https://admin:[redacted]@crm.example.com/x?page=2&zipcode=1234&client_secret=[redacted]');
    expect(redactText('https://x.example/a?postal_code=1011&country_code=NL&promo-code=WINTER&keyboard=de&code=k')).toBe(
      'https://x.example/a?postal_code=1011&country_code=NL&promo-code=WINTER&keyboard=de&code=[redacted]',
    );
  });

  it('keeps a message without secrets unchanged', () => {
    expect(redactText('request completed')).toBe('request completed');
    expect(redactText('delivery evt_1 failed: HTTP 500')).toBe('delivery evt_1 failed: HTTP 500');
    // a hex SHA-256 (what audit exports keep of a token) is not a quote token
    expect(redactText(`tokenHash ${'ab12'.repeat(16)}`)).toBe(`tokenHash ${'ab12'.repeat(16)}`);
  });
});

describe('redactLogText', () => {
  it('hides e-mail addresses as well as what redactText hides; redactText itself keeps them (audit exports need them)', () => {
    const refusal = 'failed after 2 attempt(s): 550 5.1.1 <grace.private@example.co.uk>: Recipient address rejected; key qk_live_abc';
    expect(redactLogText(refusal)).toBe('failed after 2 attempt(s): 550 5.1.1 <[e-mail]>: Recipient address rejected; key [redacted]');
    expect(redactText('ada@example.com')).toBe('ada@example.com');
    expect(redactLogText('https://user:secret@hooks.example.com/x')).toBe('https://user:[redacted]@hooks.example.com/x');
    expect(redactLogText('no address @ here')).toBe('no address @ here');
  });

  it.each([
    ['550 5.1.1 <jürgen.reject@bücher.de>: rejected', '550 5.1.1 <[e-mail]>: rejected'],
    ['to ÅSA.reject@example.se.', 'to [e-mail].'],
    ["to o'brien@example.ie and ada!x@example.com", 'to [e-mail] and [e-mail]'],
    ["quoted 'ada@example.com' here", "quoted '[e-mail]' here"],
    ['a@b@c.de', 'a@[e-mail]'],
    ['no domain dot: root@localhost', 'no domain dot: root@localhost'],
  ])('hides %s', (text, logged) => {
    expect(redactLogText(text)).toBe(logged);
  });
});
