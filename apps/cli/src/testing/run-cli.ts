import { PassThrough } from 'node:stream';
import { run } from '../main';

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
  const previous = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  set(env);
  try {
    return { code: await run(argv, { out, err }), out: stdout, err: stderr };
  } finally {
    set(previous);
  }
}
