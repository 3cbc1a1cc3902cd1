import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');

/**
 * Lets a child Node process require this repository's TypeScript sources: swc compiles each file
 * as it is required (with decorator metadata, as Nest needs), and the `@lib/…` aliases resolve.
 */
export const TYPESCRIPT_PRELUDE = `
  require('reflect-metadata');
  const { readFileSync } = require('node:fs');
  const { join } = require('node:path');
  const Module = require('node:module');
  const { transformSync } = require('@swc/core');
  const root = ${JSON.stringify(ROOT)};
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    const alias = /^@lib\\/([^/]+)(?:\\/(.*))?$/.exec(request);
    if (alias) request = join(root, 'libs', alias[1], 'src', alias[2] ?? 'index');
    return resolve.call(this, request, ...rest);
  };
  require.extensions['.ts'] = (module, filename) => {
    const { code } = transformSync(readFileSync(filename, 'utf8'), {
      filename,
      jsc: { parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    module._compile(code, filename);
  };
`;

/**
 * Runs a script in a separate Node process that can require this repository's TypeScript
 * sources, so a test can kill a consumer the hard way. The child inherits the environment.
 */
export function runTypeScript(script: string): ChildProcess {
  return spawn(process.execPath, ['-e', TYPESCRIPT_PRELUDE + script], { stdio: ['ignore', 'pipe', 'inherit'] });
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

/** The first truthy value `probe` gives, asked every 20 ms; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
