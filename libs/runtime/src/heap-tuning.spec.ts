import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { transformSync } from 'esbuild';

/** Objects that all outlive several scavenges: V8 tenures their allocation sites unless told not to. */
const WORKLOAD = `
const kept = [];
for (let round = 0; round < 100; round++) {
  for (let i = 0; i < 20000; i++) kept.push({ i, pair: [i, i + 1], inner: { i } });
  if (kept.length > 400000) kept.length = 0;
}`;

/** The number of allocation sites V8 decided to tenure in a child process, with `preload` loaded first (if any). */
function tenuredSites(preload: string | null): number {
  const dir = mkdtempSync(join(tmpdir(), 'heap-tuning-'));
  try {
    const args = ['--trace-pretenuring-statistics'];
    if (preload !== null) {
      writeFileSync(join(dir, 'preload.js'), transformSync(preload, { loader: 'ts', format: 'cjs' }).code);
      args.push('--require', join(dir, 'preload.js'));
    }
    writeFileSync(join(dir, 'workload.js'), WORKLOAD);
    const output = execFileSync(process.execPath, [...args, join(dir, 'workload.js')], { encoding: 'utf8' });
    return output.split('\n').filter((line) => line.includes('=> tenure')).length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('heap tuning of the server processes', () => {
  it('leaves V8 tenuring no allocation site, where by default it tenures some', () => {
    expect(tenuredSites(null)).toBeGreaterThan(0);
    expect(tenuredSites(readFileSync(join(__dirname, 'heap-tuning.ts'), 'utf8'))).toBe(0);
  });

  it('is the first import of every server process', () => {
    for (const app of ['api-gateway', 'projector', 'outbox']) {
      const source = readFileSync(join(__dirname, '../../../apps', app, 'src/main.ts'), 'utf8');
      const firstImport = source.split('\n').find((line) => line.startsWith('import '));
      expect({ app, firstImport }).toEqual({ app, firstImport: "import '@lib/runtime/heap-tuning';" });
    }
  });
});
