import { PassThrough } from 'node:stream';
import { run } from '../main';

/** Runs `body` with the given variables set (undefined unsets one), then puts them back. */
export async function withEnv<T>(env: Record<string, string | undefined>, body: () => Promise<T>): Promise<T> {
  const previous = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  set(env);
  try {
    return await body();
  } finally {
    set(previous);
  }
}

/**
 * Runs the CLI in this process with the given variables set for the run (undefined unsets one),
 * as `quoting-cli <argv>` would run; returns its exit code and output.
 */
export async function runCli(env: Record<string, string | undefined>, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk) => (stdout += chunk));
  err.on('data', (chunk) => (stderr += chunk));
  const code = await withEnv(env, () => run(argv, { out, err }));
  return { code, out: stdout, err: stderr };
}
