import fc from 'fast-check';
import { stripHtml } from './html';

/** What a browser would read as a tag: `<`, a letter, `/`, `!` or `?`, up to the next `>`. */
const COMPLETE_TAG = /<[a-zA-Z/!?][^>]*>/;

describe('stripHtml', () => {
  it.each([
    ['PO A<B-7', 'PO A<B-7'],
    ['Frame size<Opening, see drawing', 'Frame size<Opening, see drawing'],
    ['B<Windows GmbH', 'B<Windows GmbH'],
    ['a<b', 'a<b'],
    ['Frame a</b', 'Frame a</b'],
    ['x <? y', 'x <? y'],
    ['5 < 6', '5 < 6'],
    ['Price: <100 EUR', 'Price: <100 EUR'],
    ['a <3 b', 'a <3 b'],
  ])('keeps text that is not a complete tag: %p', (input, stored) => {
    expect(stripHtml(input)).toBe(stored);
  });

  it.each([
    ['Ada Lovelace <ada@example.com>', 'Ada Lovelace ada@example.com'],
    ['email <info@example.com> or call', 'email info@example.com or call'],
    ['<b>Ada</b> <ada.l+quotes@mail.example.co.uk>', 'Ada ada.l+quotes@mail.example.co.uk'],
    ['&lt;ada@example.com&gt;', 'ada@example.com'],
  ])('keeps an e-mail address in angle brackets, without them: %p', (input, stored) => {
    expect(stripHtml(input)).toBe(stored);
  });

  it.each([
    ['<a href="mailto:x@example.com">mail</a>', 'mail'],
    ['<img src=x@y.z onerror=alert(1)>', ''],
    ['<script>x@y.z</script>', ''],
    ['<x@y>', ''],
    // a `<` before the bracketed address makes the address a tag's name (found by a review)
    ['<<a@b.co>>', '<>'],
    ['<<img@x.y> src=x onerror=alert(1)>', '< src=x onerror=alert(1)>'],
    ['x<<svg@a.b>/onload=alert(1)>', 'x'],
    ['&lt;&lt;a@b.co&gt;&gt; and <<x@y.z> autofocus onfocus=alert(1)>', '<> and < autofocus onfocus=alert(1)>'],
  ])('still removes a tag that holds more than an address: %p', (input, stored) => {
    expect(stripHtml(input)).toBe(stored);
  });

  it('keeps a tag left open at the end as text, with what follows it', () => {
    expect(stripHtml('Note: <script')).toBe('Note: <script');
    expect(stripHtml('Note: <script>alert(1)')).toBe('Note: alert(1)');
    expect(stripHtml('<b>Bold</b> and <i unclosed')).toBe('Bold and <i unclosed');
  });

  it.each([
    ['<b>Jane</b> <script>alert(1)</script>Roe', 'Jane Roe'],
    ['<p>Hello <script>alert(1)</script>there</p> & bye', 'Hello there & bye'],
    ['<style>p { color: red }</style>Plain <em>panel</em>', 'Plain panel'],
    ['<SCRIPT type="a">x</SCRIPT >y', 'y'],
    ['<!-- note -->Delivery <a\nhref=x>in May</a>', 'Delivery in May'],
    ['<?php echo 1 ?>Window', 'Window'],
    ['<option>Red</option>', 'Red'],
    ['Eve<img src=x onerror=alert(2)>', 'Eve'],
  ])('removes complete tags and the content of script and style elements: %p', (input, stored) => {
    expect(stripHtml(input)).toBe(stored);
  });

  it('decodes entities, and removes the tags they encoded', () => {
    expect(stripHtml('<i>Acme</i> &amp; Sons')).toBe('Acme & Sons');
    expect(stripHtml('1 &lt; 2, &eacute;t&#233;')).toBe('1 < 2, été');
    expect(stripHtml('&lt;b&gt;Bold&lt;/b&gt; &amp;lt;i&amp;gt;too')).toBe('Bold too');
  });

  it.each([
    ['<<b>script>alert(1)', 'alert(1)'],
    ['<scr<b>ipt>alert(1)</script>', 'ipt>alert(1)'],
    ['<'.repeat(7) + 'b>'.repeat(6) + 'script>x', 'x'],
    ['&lt;'.repeat(7) + 'b&gt;'.repeat(6) + 'script&gt;x', 'x'],
  ])('removes a tag that forms only once another is gone, however deeply nested: %p', (input, stored) => {
    expect(stripHtml(input)).toBe(stored);
  });

  it('never leaves a complete tag, and keeps text without `>` and `&` as it is', () => {
    const text = fc.array(fc.constantFrom('<', '>', '/', '!', 'a', 'B', 'script', ' ', '&', 'lt;', 'gt;', 'amp;', 'a@b.co', '<a@b.co>', '&lt;a@b.co&gt;', ' x=1'), { maxLength: 40 }).map((parts) => parts.join(''));
    fc.assert(fc.property(text, (input) => expect(stripHtml(input)).not.toMatch(COMPLETE_TAG)), { numRuns: 10_000 });
    fc.assert(fc.property(text.filter((input) => !/[>&]/.test(input)), (input) => expect(stripHtml(input)).toBe(input.trim())), { numRuns: 500 });
  });

  it('takes time linear in the input: 100,000 `<`, unclosed and nested tags', () => {
    expect(stripHtml('<'.repeat(100_000))).toBe('<'.repeat(100_000));
    expect(stripHtml('<a'.repeat(50_000))).toBe('<a'.repeat(50_000));
    expect(stripHtml('<'.repeat(100_000) + 'b>'.repeat(100_000))).toBe('');
    expect(stripHtml('&lt;'.repeat(100_000))).toBe('<'.repeat(100_000));
    // bracketed addresses after `<`s: each `>` read the address again (3 s per MiB, found by a review)
    expect(stripHtml(`${'<'.repeat(500_000)}${'a'.repeat(240)}@b.co${'>'.repeat(500_000)}`)).toBe('<'.repeat(499_999) + '>'.repeat(499_999));
  });
});
