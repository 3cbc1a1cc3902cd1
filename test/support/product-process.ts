import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { TYPESCRIPT_PRELUDE } from '@lib/shared/testing/processes';
import { engineEnv } from './engine-env';

const ROOT = join(__dirname, '..', '..');


export interface ProductProcess {
  child: ChildProcess;
  baseUrl: string;
  /** the JSON log lines written so far */
  logs(): Array<Record<string, any>>;
  exited: Promise<number | null>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `npm start` as a child process (gateway with the projector and the outbox), from the sources. */
export async function startProduct(env: Record<string, string>): Promise<ProductProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  return startFromSources('apps/api-gateway/src/main.ts', { PORT: String(port), PUBLIC_BASE_URL: baseUrl, ...env }, baseUrl);
}

/**
 * Runs one of the apps' main files from the sources and resolves once `${baseUrl}/readyz` answers
 * 200 (the gateway's port, or OPS_PORT of a standalone projector or outbox). With real engines in
 * this process's environment, its DATA_DIR gets a database and topic prefix of its own (engineEnv),
 * as a TestApp's does: a read store shared with other tests' event logs is not this log's.
 */
export async function startFromSources(mainFile: string, env: Record<string, string>, baseUrl: string): Promise<ProductProcess> {
  const main = join(ROOT, mainFile);
  const child = spawn(process.execPath, ['-e', `${TYPESCRIPT_PRELUDE}\nrequire(${JSON.stringify(main)});`], {
    env: { ...process.env, HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'info', ...(env.DATA_DIR ? engineEnv(env.DATA_DIR) : {}), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${mainFile} exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${mainFile} was not ready in 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    baseUrl,
    exited,
    logs: () => stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)),
  };
}
