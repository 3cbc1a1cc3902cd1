import { randomBytes } from 'node:crypto';
import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

/**
 * The page behind the link in the quote e-mail, `{PUBLIC_BASE_URL}/q/{quoteToken}`. A static
 * shell: its script reads the quote from the storefront API (relative to the page, so a base URL
 * with a path prefix works) and offers accept and reject. The quote only counts as viewed when
 * the script runs, not when a mail scanner merely fetches the link. Every value is inserted as
 * text, never as HTML; the token never leaves through a Referer.
 */
@ApiExcludeController()
@Controller('q')
export class CustomerQuotePageController {
  @Get(':quoteToken')
  page(@Res() reply: FastifyReply): void {
    const nonce = randomBytes(16).toString('base64');
    void reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .header(
        'Content-Security-Policy',
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      )
      .header('Referrer-Policy', 'no-referrer')
      .header('Cache-Control', 'no-store')
      .header('X-Robots-Tag', 'noindex')
      .send(page(nonce));
  }
}

function page(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Quote</title>
<style nonce="${nonce}">
  body { font-family: system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem; color: #1d2733; }
  table { width: 100%; border-collapse: collapse; margin: 1rem 0; }
  th, td { padding: .4rem; border-bottom: 1px solid #dde3ea; text-align: left; }
  td.n, th.n { text-align: right; white-space: nowrap; }
  .status { display: inline-block; padding: .1rem .5rem; border-radius: .3rem; background: #eef2f6; }
  .muted { color: #5b6b7c; }
  button { padding: .6rem 1.2rem; margin-right: .5rem; border-radius: .3rem; border: 1px solid #1d2733; background: #fff; cursor: pointer; }
  button.primary { background: #1d2733; color: #fff; }
  textarea, input { width: 100%; box-sizing: border-box; margin: .3rem 0 .8rem; padding: .4rem; }
  [hidden] { display: none; }
</style>
</head>
<body>
<main>
  <p id="message" class="muted">Loading your quote…</p>
  <section id="quote" hidden>
    <p class="muted" id="organization"></p>
    <h1><span id="number"></span> <span class="status" id="status"></span></h1>
    <p class="muted" id="meta"></p>
    <p id="reference"></p>
    <table>
      <thead><tr><th>Description</th><th class="n">Quantity</th><th class="n">Unit price</th><th class="n">Total</th></tr></thead>
      <tbody id="lines"></tbody>
      <tfoot>
        <tr><td colspan="3">Subtotal</td><td class="n" id="subtotal"></td></tr>
        <tr><td colspan="3" id="taxLabel"></td><td class="n" id="tax"></td></tr>
        <tr><th colspan="3">Total</th><th class="n" id="total"></th></tr>
      </tfoot>
    </table>
    <p id="notes"></p>
    <section id="actions" hidden>
      <label for="name">Your name (optional)</label>
      <input id="name" maxlength="200" autocomplete="name">
      <label for="reason">Reason, if you decline (optional)</label>
      <textarea id="reason" maxlength="2000" rows="3"></textarea>
      <button class="primary" id="accept" type="button">Accept quote</button>
      <button id="reject" type="button">Decline quote</button>
    </section>
  </section>
</main>
<script nonce="${nonce}">
(function () {
  var token = location.pathname.split('/').filter(Boolean).pop() || '';
  var api = '../storefront/v1/quotes/' + encodeURIComponent(token);
  var $ = function (id) { return document.getElementById(id); };
  var labels = { sent: 'Sent', viewed: 'Open', accepted: 'Accepted', rejected: 'Declined', expired: 'Expired', draft: 'Being revised' };

  function call(method, path, body) {
    return fetch(api + path, {
      method: method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      referrerPolicy: 'no-referrer'
    }).then(function (res) {
      return res.json().then(function (data) { if (!res.ok) throw data.error || {}; return data; });
    });
  }

  function show(message) { $('message').textContent = message; $('message').hidden = !message; }

  function render(q) {
    var money = new Intl.NumberFormat(undefined, { style: 'currency', currency: q.currency });
    var date = new Intl.DateTimeFormat(undefined, { dateStyle: 'long' });
    $('organization').textContent = q.organization.name;
    $('number').textContent = 'Quote ' + q.quoteNumber;
    $('status').textContent = labels[q.status] || q.status;
    $('meta').textContent = 'Version ' + q.version + ' · valid until ' + date.format(q.validUntil);
    $('reference').textContent = q.reference ? 'Reference: ' + q.reference : '';
    $('notes').textContent = q.notes || '';
    var body = $('lines');
    body.textContent = '';
    q.lineItems.forEach(function (item) {
      var row = body.insertRow();
      [item.description, String(item.quantity), money.format(item.unitPrice), money.format(item.total)].forEach(function (text, i) {
        var cell = row.insertCell();
        cell.textContent = text;
        if (i > 0) cell.className = 'n';
      });
    });
    $('subtotal').textContent = money.format(q.subtotal);
    $('taxLabel').textContent = 'Tax (' + q.taxRate + ' %)';
    $('tax').textContent = money.format(q.taxAmount);
    $('total').textContent = money.format(q.total);
    $('actions').hidden = !((q.status === 'sent' || q.status === 'viewed') && Date.now() < q.validUntil);
    $('quote').hidden = false;
    show(q.status === 'draft' ? 'A new version of this quote is being prepared; you will receive it by e-mail.' : '');
  }

  function respond(path, body) {
    $('accept').disabled = $('reject').disabled = true;
    call('POST', path, body).then(render, function (error) {
      show(error.message || 'That did not work. Please try again.');
    }).then(function () { $('accept').disabled = $('reject').disabled = false; });
  }

  $('accept').addEventListener('click', function () {
    respond('/accept', { name: $('name').value || null });
  });
  $('reject').addEventListener('click', function () {
    respond('/reject', { name: $('name').value || null, reason: $('reason').value || null });
  });

  call('GET', '').then(render, function () { show('This quote link is not valid.'); });
})();
</script>
</body>
</html>
`;
}
