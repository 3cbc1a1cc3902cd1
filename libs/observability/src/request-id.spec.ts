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

  it('generates a different id each time', () => {
    expect(requestIdFrom(undefined)).not.toBe(requestIdFrom(undefined));
  });
});
