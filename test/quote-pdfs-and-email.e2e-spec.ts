import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { applyEvent, collectionName, matches } from '@lib/event-sourcing';
import { EventStore } from '@lib/event-store';
import { FileLinks, QUOTE_MAILS, QUOTE_PDFS, QuotePdfReactor, QuoteSentMailReactor, quotePdfId, quotePdfPath, quoteStream, type QuotePdfRecord } from '@lib/quotes';
import { ReadStore, SqliteReadStore } from '@lib/read-store';
import { FileStore } from '@lib/file-store';
import { ProjectionRegistry } from '@lib/runtime';
import { until } from '@lib/shared/testing/processes';
import { QuoteFixtures, pause, type Org } from './quotes-fixtures';
import { pdfText } from '@lib/quotes/documents/testing/pdf-text';
import { ADMIN_TOKEN, TestApp } from './support/test-app';

const BASE = 'http://localhost:3000';

/** The raw response of a GET, body as bytes. */
async function download(app: TestApp, url: string) {
  const response = await app.app.inject({ method: 'GET', url: url.startsWith(BASE) ? url.slice(BASE.length) : url });
  return { status: response.statusCode, headers: response.headers, bytes: response.rawPayload, json: () => JSON.parse(response.body) };
}

/** The PDF attached to a raw mail message, as the mailers write it: its file name and its bytes; null when there is none. */
function pdfAttachment(raw: string): { filename: string; pdf: Buffer } | null {
  const found = /Content-Type: application\/pdf; name=([^\r\n]+)\r?\nContent-Transfer-Encoding: base64\r?\nContent-Disposition: attachment; filename=[^\r\n]+\r?\n\r?\n([A-Za-z0-9+/=\r\n]+)/.exec(raw);
  return found && { filename: found[1], pdf: Buffer.from(found[2].replace(/\s/g, ''), 'base64') };
}

describe('quote PDFs and e-mail (embedded: files under DATA_DIR/mail)', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;
  let submissionId: string;

  beforeAll(async () => {
    app = await TestApp.start({ PDF_RETRY_SCHEDULE_MS: '0,50', MAIL_RETRY_SCHEDULE_MS: '0,50' });
    f = new QuoteFixtures(app);
    org = await f.organization();
    submissionId = await f.submission(org);
  });
  afterAll(() => app.close());

  const readyPdf = (quoteId: string, version = 1) =>
    until(`the PDF of ${quoteId} v${version}`, async () => {
      const quote = await f.quote(org, quoteId);
      return quote.version === version && quote.pdf.status === 'ready' ? quote : null;
    });

  it('given a sent quote, then pdf.status reaches ready and pdf.url downloads the PDF, with a fresh link on every read', async () => {
    const quoteId = await f.createQuote(org, submissionId, { reference: 'Kitchen <east>' });
    // The outbox arms the PDF after the quote is stored, so it may not exist yet (api-v1: "or null").
    expect([null, 'pending', 'generating', 'ready']).toContain((await f.quote(org, quoteId)).pdf.status);
    await f.send(org, quoteId);
    const before = Date.now();
    // The send makes the PDF again (its date and validity): the quote e-mail goes out with that
    // one. Read before, `ready` may still be the PDF made at creation, just before the send re-arms
    // it, and its link then finds no ready PDF (seen on the real engines in CI).
    await f.awaitMails(quoteId);
    const quote = await readyPdf(quoteId);
    const url = new URL(quote.pdf.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE}/files/quotes/${quoteId}/v/1.pdf`);
    expect(Number(url.searchParams.get('expires'))).toBeGreaterThanOrEqual(before + 300_000);
    expect(Number(url.searchParams.get('expires'))).toBeLessThanOrEqual(Date.now() + 300_000);
    const res = await download(app, quote.pdf.url);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`inline; filename="${quote.quoteNumber}-v1.pdf"`);
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    await pause(5);
    expect((await f.quote(org, quoteId)).pdf.url).not.toBe(quote.pdf.url);
    // The answer holds that link, which opens the PDF without a key: no cache keeps it, no Referer carries it.
    const read = await app.request('GET', `/api/v1/quotes/${quoteId}`, { token: org.apiKey });
    expect([read.headers['cache-control'], read.headers['referrer-policy']]).toEqual(['no-store', 'no-referrer']);
  });

  it("given a German customer of an imperial organization, then the downloaded PDF is in German with sizes in inches", async () => {
    const imperial = await f.organization();
    const patched = await app.request('PATCH', `/admin/v1/organizations/${imperial.organizationId}`, { token: ADMIN_TOKEN, body: { unitSystem: 'imperial' } });
    expect(patched.status).toBe(200);
    const customer = { companyName: 'Müller Bau GmbH', address: 'Hauptstraße 5\nHinterhaus', postalCode: '10115', city: 'Berlin', country: 'Deutschland' };
    const quoteId = await f.createQuote(imperial, await f.submission(imperial, { locale: 'de', name: 'Grete <b>Müller</b>', customer }), { reference: 'Küche & Bad' });
    let quote: any;
    await until('the PDF', async () => {
      quote = (await app.request('GET', `/api/v1/quotes/${quoteId}`, { token: imperial.apiKey })).body;
      return quote.pdf.status === 'ready';
    });
    const text = pdfText((await download(app, quote.pdf.url)).bytes);
    const total = new Intl.NumberFormat('de', { style: 'currency', currency: 'EUR' }).format(quote.total).replace(/\u00a0/g, ' ');
    for (const expected of ['Angebot', `Org ${imperial.slug}`, quote.quoteNumber, 'Küche & Bad', 'Grete Müller', 'Gesamtbetrag', total]) expect(text).toContain(expected);
    // the submission's company and address, which the quote does not keep
    // on one line, also where the customer typed a line break
    expect(text).toMatch(/Firma\nMüller Bau GmbH\nAdresse\nHauptstraße 5 Hinterhaus, 10115 Berlin, Deutschland/);
    expect(text).toMatch(/Größe \(B × H\)\n\d+,\d × \d+,\d in/);
    expect(text).not.toMatch(/\d mm/);
  });

  it('given a draft whose line items are replaced, then its PDF is generated again with the new items', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await readyPdf(quoteId);
    const replaced = await app.request('PUT', `/api/v1/quotes/${quoteId}/line-items`, {
      token: org.apiKey,
      body: { lineItems: [{ description: 'Replacement sash 42', quantity: 1, unitPrice: 99 }] },
    });
    expect(replaced.status).toBe(200);
    const text = await until('the regenerated PDF', async () => {
      const quote = await f.quote(org, quoteId);
      if (quote.pdf.status !== 'ready') return null;
      const content = pdfText((await download(app, quote.pdf.url)).bytes);
      return content.includes('Replacement sash 42') ? content : null;
    });
    expect(text).toContain('Replacement sash 42');
  });

  it('given a tampered, foreign or expired link, then the download is refused with 403', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    const { pdf } = await readyPdf(quoteId);
    const url = new URL(pdf.url);
    const signature = url.searchParams.get('signature')!;
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
    const refusals = [
      [`${url.pathname}?expires=${url.searchParams.get('expires')}&signature=${flipped}`, 'link_invalid'],
      [`${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 60_000}&signature=${signature}`, 'link_invalid'],
      [`${url.pathname.replace('/v/1.pdf', '/v/2.pdf')}${url.search}`, 'link_invalid'],
      [url.pathname, 'link_invalid'],
      [app.get(FileLinks).sign(quotePdfPath(quoteId, 1), Date.now() - 300_001), 'link_expired'],
    ];
    for (const [link, code] of refusals) {
      const res = await download(app, link);
      expect([link, res.status, res.json().error.code]).toEqual([link, 403, code]);
    }
    // a correctly signed link to a version without a PDF is not found
    const res = await download(app, app.get(FileLinks).sign(quotePdfPath(quoteId, 9), Date.now()));
    expect([res.status, res.json().error.code]).toEqual([404, 'not_found']);
  });

  it('given a sent quote, then the customer gets a localized mail with the link and the PDF, written under DATA_DIR/mail, and visible as sent', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await f.send(org, quoteId, { recipients: ['ada@example.com'], locale: 'nl' });
    const mail = await until('the mail file', async () => f.mails(quoteId).find((m) => m.attachments));
    const quote = await f.quote(org, quoteId);
    expect(mail).toMatchObject({ to: ['ada@example.com'], locale: 'nl', subject: `Uw offerte ${quote.quoteNumber} van Org ${org.slug}`, version: 1 });
    expect(mail.quoteUrl).toMatch(new RegExp(`^${BASE}/q/[0-9A-Za-z]{43}$`));
    expect(mail.attachments).toEqual([{ filename: `${quote.quoteNumber}-v1.pdf`, contentType: 'application/pdf', size: expect.any(Number) }]);
    const eml = readFileSync(join(app.config.dataDir, 'mail', mail.eml), 'utf8');
    expect(eml).toContain(`Content-Type: application/pdf; name=${quote.quoteNumber}-v1.pdf`);
    expect(eml.replace(/=\r?\n/g, '')).toContain(mail.quoteUrl);
    // Sent in Dutch to an English customer: the attached PDF is Dutch too, like the message.
    const attachedText = pdfText(pdfAttachment(eml)!.pdf);
    expect(attachedText).toContain('Offertenummer');
    expect(attachedText).not.toContain('Quote number');
    // the file is written before the delivery record is marked sent
    const emails = await until('the mail marked sent', async () => {
      const response = await app.request('GET', `/api/v1/quotes/${quoteId}/emails`, { token: org.apiKey });
      return response.body.data?.[0]?.status === 'sent' ? response : undefined;
    });
    expect(emails.status).toBe(200);
    expect(emails.body).toEqual({
      data: [expect.objectContaining({ version: 1, recipients: ['ada@example.com'], locale: 'nl', status: 'sent', attempts: 1, lastError: null, pdfAttached: true, nextAttemptAt: null })],
      nextCursor: null,
    });
  });

  it('given the customer link, then the storefront serves the PDF of the version last sent, also while a revision is drafted', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await f.send(org, quoteId);
    const token = await f.customerToken(quoteId);
    const first = await download(app, `/storefront/v1/quotes/${token}/pdf`);
    expect([first.status, first.headers['content-type'], first.bytes.subarray(0, 5).toString()]).toEqual([200, 'application/pdf', '%PDF-']);
    const revised = await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'Second thoughts', revise: true } });
    expect(revised.status).toBe(200);
    await readyPdf(quoteId, 2);
    const again = await download(app, `/storefront/v1/quotes/${token}/pdf`);
    expect(again.status).toBe(200);
    expect(again.headers['content-disposition']).toMatch(/-v1\.pdf"$/);
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect((await download(app, `/storefront/v1/quotes/${'x'.repeat(43)}/pdf`)).status).toBe(404);
  });

  it('given the PDF file is gone (a store restored without pdfs/), then its first download is 404 and the PDF is generated again', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await f.send(org, quoteId);
    const quote = await readyPdf(quoteId);
    rmSync(join(app.config.dataDir, 'pdfs', 'quotes', quoteId), { recursive: true, force: true });

    const missing = await download(app, quote.pdf.url);
    expect(missing.status).toBe(404);
    const again = await readyPdf(quoteId);
    const res = await download(app, again.pdf.url);
    expect([res.status, res.bytes.subarray(0, 5).toString()]).toEqual([200, '%PDF-']);
    expect((await download(app, `/storefront/v1/quotes/${await f.customerToken(quoteId)}/pdf`)).status).toBe(200);
  });

  it('given draft changes, then only the PDF of the content as it now is stays on disk', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await readyPdf(quoteId);
    const files = () => readdirSync(join(app.config.dataDir, 'pdfs', 'quotes', quoteId));
    const [first] = files();
    for (const notes of ['Fitted in May', 'Fitted in June', 'Fitted in July']) {
      const before = await download(app, (await readyPdf(quoteId)).pdf.url);
      expect((await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes } })).status).toBe(200);
      await until(`the PDF with ${notes}`, async () => {
        const current = (await f.quote(org, quoteId)).pdf;
        return current.status === 'ready' && !(await download(app, current.url)).bytes.equals(before.bytes);
      });
    }
    await until('one file left', async () => files().length === 1 && files()[0] !== first);
  });

  it('given the superseded PDF cannot be deleted, then the new one is still made and ready', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    const before = await download(app, (await readyPdf(quoteId)).pdf.url);
    const undeletable = jest.spyOn(app.get(FileStore), 'delete').mockRejectedValue(new Error('EPERM: operation not permitted'));
    try {
      expect((await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'Fitted in August' } })).status).toBe(200);
      await until('the new PDF', async () => {
        const current = (await f.quote(org, quoteId)).pdf;
        return current.status === 'ready' && !(await download(app, current.url)).bytes.equals(before.bytes);
      });
      expect(undeletable).toHaveBeenCalled();
    } finally {
      undeletable.mockRestore();
    }
  });

  it('given a draft change, then the PDF of the version is made again', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    const { pdf } = await readyPdf(quoteId);
    const before = await download(app, pdf.url);
    expect((await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'Fitted in May' } })).status).toBe(200);
    const after = await until('a new PDF', async () => {
      const current = await f.quote(org, quoteId);
      if (current.pdf.status !== 'ready') return null;
      const res = await download(app, current.pdf.url);
      return res.bytes.equals(before.bytes) ? null : res;
    });
    expect(after.bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });
});

describe('quote PDFs when generation fails', () => {
  let app: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'quoting-pdf-fail-'));
    // a file where the PDF directory belongs: every write of a PDF fails
    writeFileSync(join(dataDir, 'pdfs'), 'not a directory');
    app = await TestApp.start({ PDF_RETRY_SCHEDULE_MS: '0,20,20', MAIL_RETRY_SCHEDULE_MS: '0,20' }, dataDir);
  });
  afterAll(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('given the PDF cannot be stored, then it is retried and ends failed; the mail renders it itself; a later change makes it again', async () => {
    const f = new QuoteFixtures(app);
    const org = await f.organization();
    const quoteId = await f.createQuote(org, await f.submission(org));
    const failed = await until('the failed PDF', async () => {
      const quote = await f.quote(org, quoteId);
      return quote.pdf.status === 'failed' ? quote : null;
    });
    expect(failed.pdf).toEqual({ status: 'failed', url: null });
    expect(await app.get(ReadStore).get(QUOTE_PDFS, quotePdfId(quoteId, 1))).toMatchObject({ attempts: 3, lastError: expect.stringMatching(/ENOTDIR|EEXIST/) });

    await f.send(org, quoteId);
    const mail = await until('the mail', async () => f.mails(quoteId).find((m) => m.attachments));
    expect(mail.attachments).toEqual([{ filename: `${failed.quoteNumber}-v1.pdf`, contentType: 'application/pdf', size: expect.any(Number) }]);

    rmSync(join(dataDir, 'pdfs'));
    expect((await app.request('PATCH', `/api/v1/quotes/${quoteId}`, { token: org.apiKey, body: { notes: 'Fitted in May', revise: true } })).status).toBe(200);
    const ready = await until('the PDF of version 2', async () => {
      const quote = await f.quote(org, quoteId);
      return quote.version === 2 && quote.pdf.status === 'ready' ? quote : null;
    });
    expect((await download(app, ready.pdf.url)).bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });
});

interface Received {
  to: string[];
  raw: string;
}

describe('quote e-mail over SMTP (SMTP_URL, a real smtp-server in the test)', () => {
  let app: TestApp;
  let f: QuoteFixtures;
  let org: Org;
  let submissionId: string;
  let server: SMTPServer;
  const received: Received[] = [];
  let refuse = 0;

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (refuse > 0) {
            refuse--;
            const error = Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 });
            return callback(error);
          }
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    app = await TestApp.start({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Fenster <angebote@fenster.example>', MAIL_RETRY_SCHEDULE_MS: '0,400,400' });
    f = new QuoteFixtures(app);
    org = await f.organization();
    submissionId = await f.submission(org, { locale: 'de' });
  });
  afterAll(async () => {
    await app.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const emails = async (quoteId: string) => (await app.request('GET', `/api/v1/quotes/${quoteId}/emails`, { token: org.apiKey })).body.data;

  it('given a sent quote, then the SMTP server receives the localized mail with the quote link and the PDF attached', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    const sent = await f.send(org, quoteId, { recipients: ['ada@example.com', 'office@example.com'] });
    expect(sent.status).toBe('sent');
    const message = await until('the SMTP message', async () => received.find((m) => m.raw.includes(quoteId) || m.to.includes('office@example.com')));
    const quote = await f.quote(org, quoteId);
    expect(message.to).toEqual(['ada@example.com', 'office@example.com']);
    const raw = message.raw.replace(/=\r?\n/g, '');
    expect(raw).toContain('From: Fenster <angebote@fenster.example>');
    expect(raw).toContain(`Subject: Ihr Angebot ${quote.quoteNumber} von Org ${org.slug}`);
    const link = new RegExp(`${BASE}/q/([0-9A-Za-z]{43})`).exec(raw);
    expect(link).not.toBeNull();
    // the link in the mail is the customer's link: it opens the quote on the storefront
    expect((await app.request('GET', `/storefront/v1/quotes/${link![1]}`)).body.quoteNumber).toBe(quote.quoteNumber);
    const attachment = pdfAttachment(message.raw);
    expect(attachment?.filename).toBe(`${quote.quoteNumber}-v1.pdf`);
    const { pdf } = attachment!;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfText(pdf)).toContain(`Angebot`);
    expect(pdfText(pdf)).toContain(quote.quoteNumber);
    // The mail is marked sent once the server's 250 is read: after the message arrived.
    const mail = await until('the mail marked sent', async () => (await emails(quoteId)).find((each: { status: string }) => each.status === 'sent'));
    expect(mail).toMatchObject({ status: 'sent', attempts: 1, pdfAttached: true, locale: 'de' });
  });

  it('given the SMTP server refuses at first, then the mail is retried, its error visible meanwhile, and delivered once', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    const count = received.length;
    refuse = 1;
    await f.send(org, quoteId, { recipients: ['retry@example.com'] });
    const waiting = await until('the failed first attempt', async () => (await emails(quoteId)).find((m: any) => m.status === 'pending' && m.attempts === 1));
    expect(waiting.lastError).toMatch(/451|busy/);
    expect(waiting.nextAttemptAt).toEqual(expect.any(Number));
    const delivered = await until('the delivery', async () => (await emails(quoteId)).find((m: any) => m.status === 'sent'));
    expect(delivered).toMatchObject({ attempts: 2, lastError: null });
    expect(received.slice(count).filter((m) => m.to.includes('retry@example.com'))).toHaveLength(1);
  });

  it('given the SMTP server refuses every attempt, then the mail ends failed with its last error, never dropped silently', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    refuse = 3;
    await f.send(org, quoteId, { recipients: ['never@example.com'] });
    const failed = await until('the final failure', async () => (await emails(quoteId)).find((m: any) => m.status === 'failed'));
    expect(failed).toMatchObject({ attempts: 3, maxAttempts: 3, pdfAttached: false, deliveredAt: null });
    expect(failed.lastError).toMatch(/451|busy/);
    expect(received.some((m) => m.to.includes('never@example.com'))).toBe(false);
  });

  it('given the outbox sees the send again, then no second mail is sent and the PDF is not made again', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await f.send(org, quoteId, { recipients: ['once@example.com'] });
    await until('the delivery', async () => (await emails(quoteId)).find((m: any) => m.status === 'sent'));
    const reads = app.get(ReadStore);
    const pdfBefore = await reads.get<QuotePdfRecord>(QUOTE_PDFS, quotePdfId(quoteId, 1));
    expect(pdfBefore?.status).toBe('done');
    const events = await app.get(EventStore).readStream(quoteStream(quoteId));
    for (const event of events) {
      await app.get(QuotePdfReactor).react(event);
      await app.get(QuoteSentMailReactor).react(event);
    }
    await pause(300);
    expect(received.filter((m) => m.to.includes('once@example.com'))).toHaveLength(1);
    expect(await emails(quoteId)).toHaveLength(1);
    expect(await reads.get<QuotePdfRecord>(QUOTE_PDFS, quotePdfId(quoteId, 1))).toEqual(pdfBefore);
  });

  it('given every projection is rebuilt from the whole event log, then no PDF job or mail is created or sent', async () => {
    const quoteId = await f.createQuote(org, submissionId);
    await f.send(org, quoteId, { recipients: ['rebuild@example.com'] });
    await until('the delivery', async () => (await emails(quoteId)).find((m: any) => m.status === 'sent'));
    const reads = app.get(ReadStore);
    const counts = async () => [await reads.count(QUOTE_PDFS), await reads.count(QUOTE_MAILS), received.length];
    const before = await counts();
    const projections = app.get(ProjectionRegistry).all();
    const owned = projections.flatMap((p) => Object.keys(p.collections).map((c) => collectionName(p, c)));
    expect(owned).not.toContain(QUOTE_PDFS);
    expect(owned).not.toContain(QUOTE_MAILS);
    const rebuilt = new SqliteReadStore({ file: ':memory:' });
    const events = app.get(EventStore);
    for (let after = 0; ; ) {
      const page = await events.readAll({ after, maxCount: 500 });
      if (page.length === 0) break;
      for (const event of page) {
        for (const projection of projections.filter((p) => matches(p.filter, event))) {
          await applyEvent(rebuilt, projection, event);
          await applyEvent(reads, projection, event);
        }
      }
      after = page[page.length - 1].position;
    }
    await pause(300);
    expect(await rebuilt.listCollections()).not.toContain(QUOTE_PDFS);
    expect(await rebuilt.listCollections()).not.toContain(QUOTE_MAILS);
    expect(await counts()).toEqual(before);
    await rebuilt.close();
  });
});
