import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { Logger, type ArgumentsHost } from '@nestjs/common';
import { ErrorEnvelopeFilter } from '@lib/http';
import { TYPESCRIPT_PRELUDE } from '@lib/shared/testing/processes';
import Fastify from 'fastify';
import { createLogger, createNestLogger, flushRequestLines, logRequestCompleted, registerRequestLogging } from './logging';
import { requestIdFrom } from './request-id';

describe('request logging', () => {
  it('logs every request once with its id, after the body was read and the response was sent', async () => {
    const written: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (written.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'info', name: 'test', destination });
    Logger.overrideLogger(createNestLogger(root));
    const fastify = Fastify({ genReqId: (raw) => requestIdFrom(raw.headers['x-request-id']) });
    registerRequestLogging(fastify, root);
    const logger = new Logger('Handler');
    fastify.post('/things', async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      logger.warn(`handling ${(request.body as { name: string }).name} with Bearer qk_live_secret0123456789`);
      return { ok: true };
    });
    try {
      // Over a real socket: the body arrives in socket events, outside the request's async context.
      const address = await fastify.listen({ port: 0, host: '127.0.0.1' });
      // The body comes in two parts, some time after the headers.
      const status = await new Promise<string | string[] | undefined>((resolve, reject) => {
        const req = request(`${address}/things`, { method: 'POST', headers: { 'x-request-id': 'req-42', 'content-type': 'application/json', 'content-length': 14 } }, (res) => {
          res.resume();
          resolve(res.headers['x-request-id']);
        });
        req.on('error', reject);
        req.write('{"name":');
        setTimeout(() => req.end('"box"}'), 50);
      });
      expect(status).toBe('req-42');
      logger.log('outside any request');
    } finally {
      await fastify.close();
      Logger.overrideLogger(false);
    }
    flushRequestLines();
    const lines = written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(lines.find((l) => l.context === 'Handler')).toMatchObject({ level: 'warn', msg: 'handling box with Bearer [redacted]' });
    expect(lines.filter((l) => l.msg === 'request completed')).toEqual([
      expect.objectContaining({ requestId: 'req-42', req: { method: 'POST', url: '/things' }, res: { statusCode: 200 } }),
    ]);
    expect(lines.find((l) => l.msg === 'outside any request')?.requestId).toBeUndefined();
  });

  it('writes the request line as pino would write the same fields, with its URL redacted', async () => {
    const written: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (written.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'info', name: 'test "quoted"', destination });
    const fastify = Fastify({ genReqId: (raw) => requestIdFrom(raw.headers['x-request-id']) });
    registerRequestLogging(fastify, root);
    fastify.get('/q/:token', async () => ({ ok: true }));
    fastify.get('/broken', async (_request, reply) => reply.status(503).send({ down: true }));
    try {
      await fastify.inject({ method: 'GET', url: '/q/qt_SECRET9?lang=nl&token=SECRET8', headers: { 'x-request-id': 'req-"1"' } });
      await fastify.inject({ method: 'GET', url: '/broken', headers: { 'x-request-id': 'req-2' } });
    } finally {
      await fastify.close();
    }
    flushRequestLines();
    const lines = written.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(written.join('')).not.toContain('SECRET');
    const [ok, failed] = lines.map((line) => JSON.parse(line));
    // A request id with a quote in it is not acceptable and is replaced by a new one.
    expect(ok.requestId).toMatch(/^[0-9a-f-]{36}$/);
    for (const [line, level, requestId, url, statusCode] of [
      [ok, 'info', ok.requestId, '/q/[redacted]?lang=nl&token=[redacted]', 200],
      [failed, 'error', 'req-2', '/broken', 503],
    ] as const) {
      written.length = 0;
      root[level]({ requestId, req: { method: 'GET', url }, res: { statusCode }, durationMs: line.durationMs }, 'request completed');
      const byPino = JSON.parse(written.join(''));
      expect(Object.keys(line)).toEqual(Object.keys(byPino));
      expect({ ...line, time: null }).toEqual({ ...byPino, time: null });
      expect(Date.parse(line.time)).toBeGreaterThan(0);
    }
  });

  it('hands request lines to the destination together, 10 ms after the first or at once past 64 KiB', async () => {
    const writes: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (writes.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'info', name: 'test', destination });
    const completed = (n: number) => ({ requestId: `req-${n}`, method: 'GET', url: `/api/v1/quotes?n=${n}`, statusCode: 200, elapsedMs: 1 });
    logRequestCompleted(root, completed(1));
    logRequestCompleted(root, { ...completed(2), url: '/q/qt_SECRET1', loggedUrl: '/q/[redacted]' });
    // Not written as they come (a Writable's write runs at once), but held for the batch.
    expect(writes).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(writes).toHaveLength(1);
    const lines = writes[0].split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.requestId, line.req.url])).toEqual([
      ['req-1', '/api/v1/quotes?n=1'],
      ['req-2', '/q/[redacted]'],
    ]);

    // ~220 characters a line: the 64 KiB limit is reached within 400 lines, and written at once.
    for (let n = 3; n < 403; n++) logRequestCompleted(root, completed(n));
    expect(writes.length).toBe(2);
    expect(writes[1].length).toBeGreaterThanOrEqual(64 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const all = writes.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line).requestId);
    expect(all).toEqual(Array.from({ length: 402 }, (_, i) => `req-${i + 1}`));
  });

  it('writes the batched request lines before the process exits', () => {
    const script = `
      const { createLogger, logRequestCompleted } = require(${JSON.stringify(require.resolve('./logging'))});
      const logger = createLogger({ level: 'info', name: 'exiting' });
      logRequestCompleted(logger, { requestId: 'last', method: 'GET', url: '/x', statusCode: 200, elapsedMs: 1 });
      process.exit(0);
    `;
    const out = execFileSync(process.execPath, ['-e', TYPESCRIPT_PRELUDE + script], { encoding: 'utf8' });
    expect(out.split('\n').filter(Boolean).map((line) => JSON.parse(line).requestId)).toEqual(['last']);
  });

  it('censors secret fields of logged objects and secrets quoted in error messages', () => {
    const written: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (written.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'info', name: 'test', destination });
    root.info({ token: 'tok-1', apiKey: 'qk_live_abc', headers: { authorization: 'Bearer secret-2' }, deliveryId: 'evt_1' }, 'sent');
    root.error({ err: new Error('POST https://partner.example/api/v1/configuration-sessions/pct_SECRET3/adjustments failed') }, 'failed');
    const [sent, failed] = written.map((line) => JSON.parse(line));
    expect(sent).toMatchObject({ token: '[redacted]', apiKey: '[redacted]', headers: { authorization: '[redacted]' }, deliveryId: 'evt_1' });
    expect(failed.err.message).toBe('POST https://partner.example/api/v1/configuration-sessions/[redacted]/adjustments failed');
    expect(written.join('')).not.toContain('SECRET3');
  });

  it('hides e-mail addresses in messages and error text: a mail server quotes the recipient it refuses', () => {
    const written: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (written.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'info', name: 'test', destination });
    root.error('quote e-mail m_1 failed after 2 attempt(s): 550 5.1.1 <grace.private@example.com>: Recipient address rejected');
    root.error({ err: new Error('all recipients were rejected: <ada@example.com>') }, 'failed');
    expect(written.join('')).not.toContain('@example.com');
    expect(JSON.parse(written[0]).msg).toContain('<[e-mail]>: Recipient address rejected');
  });

  it('writes no request lines above info, while other lines are still written', async () => {
    const written: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (written.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'warn', name: 'test', destination });
    Logger.overrideLogger(createNestLogger(root));
    const fastify = Fastify({ genReqId: (raw) => requestIdFrom(raw.headers['x-request-id']) });
    registerRequestLogging(fastify, root);
    fastify.get('/things', async () => {
      new Logger('Handler').warn('something odd');
      return { ok: true };
    });
    try {
      const res = await fastify.inject({ method: 'GET', url: '/things', headers: { 'x-request-id': 'req-7' } });
      expect(res.headers['x-request-id']).toBe('req-7');
    } finally {
      await fastify.close();
      Logger.overrideLogger(false);
    }
    flushRequestLines();
    const lines = written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    expect(lines.map((l) => l.msg)).toEqual(['something odd']);
  });

  it('puts the request id on the line of a request that failed with a 5xx, with its stack redacted', async () => {
    const written: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => (written.push(chunk.toString()), done()) });
    const root = createLogger({ level: 'info', name: 'test', destination });
    Logger.overrideLogger(createNestLogger(root));
    const filter = new ErrorEnvelopeFilter();
    const fastify = Fastify({ genReqId: (raw) => requestIdFrom(raw.headers['x-request-id']) });
    registerRequestLogging(fastify, root);
    fastify.setErrorHandler((error, request, reply) => {
      filter.catch(error, { switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }) } as unknown as ArgumentsHost);
    });
    fastify.get('/broken', async () => {
      throw new Error('store down for qk_live_0123456789abcdefghijABCDEFGHIJ01');
    });
    try {
      const res = await fastify.inject({ method: 'GET', url: '/broken', headers: { 'x-request-id': 'req-500' } });
      expect(res.statusCode).toBe(500);
    } finally {
      await fastify.close();
      Logger.overrideLogger(false);
    }
    flushRequestLines();
    const lines = written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    const failure = lines.find((l) => l.level === 'error' && l.context === 'HTTP');
    expect(failure).toMatchObject({ requestId: 'req-500' });
    expect(failure.msg).toContain('store down for');
    expect(written.join('')).not.toContain('qk_live_0123456789');
  });
});
