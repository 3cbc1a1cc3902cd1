import { ChildProcess, spawn } from 'node:child_process';

/**
 * Runs a script in a separate Node process that can require this repository's TypeScript
 * sources, so a test can kill a consumer the hard way. The child inherits the environment.
 */
export function runTypeScript(script: string): ChildProcess {
  const requireTypeScript = `
    const { readFileSync } = require('node:fs');
    const { transformSync } = require('@swc/core');
    require.extensions['.ts'] = (module, filename) => {
      const { code } = transformSync(readFileSync(filename, 'utf8'), {
        filename,
        jsc: { parser: { syntax: 'typescript', decorators: true }, target: 'es2022' },
        module: { type: 'commonjs' },
      });
      module._compile(code, filename);
    };
  `;
  return spawn(process.execPath, ['-e', requireTypeScript + script], { stdio: ['ignore', 'pipe', 'inherit'] });
}

export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) resolve(output.split('\n')[0]);
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code} before writing a line`)));
  });
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
