/**
 * Crash test (npm run crash-test -- [cycles]): runs the whole product in a child process under
 * write and webhook-delivery load, kills it with SIGKILL at a random moment, restarts it on the
 * same DATA_DIR, and repeats. Then it checks what must survive any crash:
 *
 * - every acknowledged write (a 2xx answer) is readable;
 * - every submission, quote and lead that exists had its webhook delivered at least once;
 * - quote numbers are unique and gap-free;
 * - the read models equal a replay: a second product on a copy of the event store alone, with no
 *   read models, rebuilds them from the events and must serve the same lists.
 *
 * Exits non-zero on any violation. CI runs 3 cycles; the long run (20+) is recorded in
 * docs/reliability.md.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_TEMPLATE } from '../apps/api-gateway/src/demo-template';
import { windowConfiguration } from './configuration';
import { call } from './http-client';
import { startProcess, type ServerProcess } from './server-process';

const ADMIN_TOKEN = 'adm_crash_0123456789abcdefghij_padded_to_32_chars';
const CYCLES = Number(process.argv[2] ?? process.env.CRASH_CYCLES ?? 3);
const WORKERS = 6;

interface Acknowledged {
  contacts: string[];
  leads: string[];
  submissions: string[];
  quotes: string[];
}

/** A webhook receiver that answers 200 and remembers every event it was handed. */
async function startReceiver(): Promise<{ server: Server; url: string; events: Map<string, Set<string>> }> {
  const events = new Map<string, Set<string>>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      try {
        const envelope = JSON.parse(body);
        const type = String(request.headers['x-service-event']);
        const subject = type.startsWith('quote.') ? envelope.data?.quote?.id : type.startsWith('lead.') ? envelope.data?.lead?.id : envelope.data?.submission?.id;
        if (!events.has(type)) events.set(type, new Set());
        events.get(type)!.add(subject);
      } catch {
        /* not ours */
      }
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, events };
}

function productEnv(dataDir: string, port: number): Record<string, string> {
  return {
    PORT: String(port),
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    SEED_DEMO: 'false',
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_KEY_PER_MIN: '0',
    RATE_LIMIT_CAPABILITY_PER_MIN: '0',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE_MS: '0,200,500,1000,2000,2000,2000,2000,2000,2000',
  };
}

const main = join(__dirname, '../apps/api-gateway/src/main.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes through the public API until stopped; records what was acknowledged. */
async function load(baseUrl: string, org: { slug: string; apiKey: string; templateId: string }, acknowledged: Acknowledged, stop: () => boolean): Promise<void> {
  let n = 0;
  const worker = async (w: number) => {
    while (!stop()) {
      const i = n++;
      try {
        switch (i % 4) {
          case 0: {
            const contact = await call(baseUrl, 'POST', '/api/v1/contacts', org.apiKey, { email: `c${w}-${i}-${Date.now()}@example.com`, name: `Contact ${i}` });
            acknowledged.contacts.push(contact.id);
            break;
          }
          case 1: {
            const lead = await call(baseUrl, 'POST', `/storefront/v1/${org.slug}/leads`, undefined, { name: `Lead ${i}`, email: `l${i}@example.com`, message: 'Call me' });
            acknowledged.leads.push(lead.id);
            break;
          }
          default: {
            const session = await call(baseUrl, 'POST', `/storefront/v1/${org.slug}/sessions`, undefined, { templateId: org.templateId });
            await call(baseUrl, 'PUT', `/storefront/v1/sessions/${session.sessionId}/configuration`, session.customerToken, windowConfiguration());
            const { submissionId } = await call(baseUrl, 'POST', `/storefront/v1/sessions/${session.sessionId}/submit`, session.customerToken, { customer: { name: `Customer ${i}`, email: `s${i}@example.com` } });
            acknowledged.submissions.push(submissionId);
            const { quoteId } = await call(baseUrl, 'POST', `/api/v1/submissions/${submissionId}/quotes`, org.apiKey, {});
            acknowledged.quotes.push(quoteId);
          }
        }
      } catch {
        // refused or cut off by the kill: not acknowledged, so nothing is owed
        if (stop()) return;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
}

/** Every page of a list endpoint. */
async function listAll(baseUrl: string, path: string, apiKey: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const page: { data: any[]; nextCursor: string | null } = await call(baseUrl, 'GET', `${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, apiKey);
    items.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

async function waitUntil(what: string, condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function run(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'crash-test-'));
  const replayDir = mkdtempSync(join(tmpdir(), 'crash-replay-'));
  const receiver = await startReceiver();
  const port = 3600 + Math.floor(Math.random() * 300);
  const failures: string[] = [];
  let product: ServerProcess | null = null;
  try {
    product = await startProcess(main, [], productEnv(dataDir, port), port, '/healthz');
    const base = product.baseUrl;
    const slug = `crash-${Date.now().toString(36)}`;
    const created = await call(base, 'POST', '/admin/v1/organizations', ADMIN_TOKEN, { name: 'Crash Windows', slug });
    await call(base, 'PATCH', `/admin/v1/organizations/${created.id}`, ADMIN_TOKEN, { settings: { webhookUrl: receiver.url } });
    const key = await call(base, 'POST', `/admin/v1/organizations/${created.id}/api-keys`, ADMIN_TOKEN, { name: 'crash' });
    const template = await call(base, 'POST', `/admin/v1/organizations/${created.id}/templates`, ADMIN_TOKEN, DEMO_TEMPLATE);
    const org = { slug, apiKey: key.key as string, templateId: template.id as string };
    const acknowledged: Acknowledged = { contacts: [], leads: [], submissions: [], quotes: [] };

    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      if (!product) product = await startProcess(main, [], productEnv(dataDir, port), port, '/healthz');
      let stopped = false;
      const running = load(product.baseUrl, org, acknowledged, () => stopped);
      await sleep(300 + Math.random() * 2_000);
      product.child.kill('SIGKILL');
      await new Promise((resolve) => product!.child.once('exit', resolve));
      stopped = true;
      await running;
      product = null;
      const total = Object.values(acknowledged).reduce((sum, ids) => sum + ids.length, 0);
      console.log(`cycle ${cycle}/${CYCLES}: killed with SIGKILL; ${total} writes acknowledged so far`);
    }

    product = await startProcess(main, [], productEnv(dataDir, port), port, '/healthz');
    const base2 = product.baseUrl;

    // 1. every acknowledged write is readable
    const paths: Array<[keyof Acknowledged, string]> = [['contacts', '/api/v1/contacts/'], ['leads', '/api/v1/leads/'], ['submissions', '/api/v1/submissions/'], ['quotes', '/api/v1/quotes/']];
    for (const [kind, prefix] of paths) {
      for (const id of acknowledged[kind]) {
        const response = await fetch(base2 + prefix + id, { headers: { authorization: `Bearer ${org.apiKey}` } });
        if (response.status !== 200) failures.push(`acknowledged ${kind} ${id} answers ${response.status}`);
      }
    }

    // 2. every submission, quote and lead that exists is delivered at least once
    const quotes = await listAll(base2, '/api/v1/quotes', org.apiKey);
    const submissions = await listAll(base2, '/api/v1/submissions', org.apiKey);
    const leads = await listAll(base2, '/api/v1/leads', org.apiKey);
    const owed: Array<[string, string[]]> = [
      ['submission.created', submissions.map((s) => s.id)],
      ['quote.created', quotes.map((q) => q.id)],
      ['lead.created', leads.map((l) => l.id)],
    ];
    const undelivered = () => owed.flatMap(([type, ids]) => ids.filter((id) => !receiver.events.get(type)?.has(id)).map((id) => `${type} ${id}`));
    try {
      await waitUntil('every webhook to be delivered', async () => undelivered().length === 0, 120_000);
    } catch {
      failures.push(...undelivered().map((missing) => `never delivered: ${missing}`));
    }

    // 3. quote numbers unique and gap-free
    const numbers = quotes.map((q) => Number(String(q.quoteNumber).slice(-6))).sort((a, b) => a - b);
    if (new Set(numbers).size !== numbers.length) failures.push(`duplicate quote numbers: ${numbers.join(',')}`);
    numbers.forEach((number, i) => {
      if (number !== i + 1) failures.push(`quote numbers not gap-free at ${i + 1}: got ${number}`);
    });

    // 4. read models equal a replay of the events
    await product.stop();
    product = null;
    for (const file of ['events.db', 'events.db-wal', 'events.db-shm']) {
      if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(replayDir, file));
    }
    const replay = await startProcess(main, ['--only-gateway'], productEnv(replayDir, port + 1), port + 1, '/healthz');
    const projector = spawn(process.execPath, [join(__dirname, '../apps/projector/src/main.js')], { env: { ...process.env, ...productEnv(replayDir, port + 2) }, stdio: ['ignore', 'ignore', 'inherit'] });
    product = await startProcess(main, [], productEnv(dataDir, port), port, '/healthz');
    try {
      for (const path of ['/api/v1/quotes', '/api/v1/submissions', '/api/v1/leads', '/api/v1/contacts']) {
        const expected = JSON.stringify(await listAll(product.baseUrl, path, org.apiKey));
        await waitUntil(`the replay of ${path}`, async () => JSON.stringify(await listAll(replay.baseUrl, path, org.apiKey).catch(() => [])) === expected, 60_000).catch(() =>
          failures.push(`${path} differs between the live read model and a replay of the events`),
        );
      }
    } finally {
      await replay.stop();
      projector.kill('SIGTERM');
      await new Promise((resolve) => projector.once('exit', resolve));
    }

    const total = Object.values(acknowledged).reduce((sum, ids) => sum + ids.length, 0);
    console.log(
      `${CYCLES} kill cycles; ${total} acknowledged writes (${acknowledged.contacts.length} contacts, ${acknowledged.leads.length} leads, ` +
        `${acknowledged.submissions.length} submissions, ${acknowledged.quotes.length} quotes); ${quotes.length} quotes, ` +
        `${submissions.length} submissions, ${leads.length} leads in the read models; ${failures.length} violations`,
    );
  } finally {
    await product?.stop();
    receiver.server.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(replayDir, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    for (const failure of failures.slice(0, 50)) console.error(`FAIL ${failure}`);
    process.exit(1);
  }
}

run().catch((error) => {
  console.error(error);
  process.exit(1);
});
