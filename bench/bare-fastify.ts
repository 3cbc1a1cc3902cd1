import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

/** The baseline: a bare Fastify server answering one precomputed JSON payload. */
async function main(): Promise<void> {
  const [payloadFile, port] = process.argv.slice(2);
  const payload = readFileSync(payloadFile, 'utf8');
  const app = Fastify({ logger: false });
  app.get('/api/v1/quotes', async (_request, reply) => reply.type('application/json; charset=utf-8').send(payload));
  await app.listen({ port: Number(port), host: '127.0.0.1' });
}

void main();
