import { requestIdFrom } from './request-id';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestIdFrom', () => {
  it('keeps an acceptable incoming id', () => {
    expect(requestIdFrom('req-123_abc.def')).toBe('req-123_abc.def');
    expect(requestIdFrom(['first', 'second'])).toBe('first');
  });

  it.each([[undefined], [''], ['x'.repeat(129)], ['has space'], ['new\nline'], ['{"json":1}']])('replaces %j with a generated id', (header) => {
    expect(requestIdFrom(header)).toMatch(UUID);
  });

  it.each([
    ['an API key', `qk_live_${'k3Y'.repeat(14)}`],
    ['a webhook signing secret', 'whsec_AKjU9c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0cw=='],
    ['a customer token', `cst_${'Cu5t'.repeat(10)}`],
    ['a pricing capability token', `pct_${'Ab3-Xy9_Qz'.repeat(4)}k0-`],
    ['the admin token', `adm_${'Ad1n'.repeat(10)}`],
    ['a customer quote token', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ABCDEFG'],
    ['a quote link', 'https://quotes.example/q/AbC123xyz'],
    ['an API key after a plain prefix', `trace:qk_live_${'k3Y'.repeat(14)}`],
  ])('replaces an id holding %s: it would be logged and echoed in clear', (_what, header) => {
    expect(requestIdFrom(header)).toMatch(UUID);
  });

  it('keeps ids of common tracing formats', () => {
    for (const id of ['0af7651916cd43dd8448eb211c80319c', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'Root=1-5759e988-bd862e3fe1be46a994272793', 'svc/api:req_7']) {
      expect(requestIdFrom(id)).toBe(id);
    }
  });

  it('generates a different id each time', () => {
    expect(requestIdFrom(undefined)).not.toBe(requestIdFrom(undefined));
  });
});
