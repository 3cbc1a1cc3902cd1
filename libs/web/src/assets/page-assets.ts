import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';

/** The browser side of the customer pages: one script per page and one stylesheet. */
export const PAGE_ENTRIES = ['configurator.ts', 'quote.ts', 'contact.ts', 'styles.css'] as const;

export interface PageAsset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

function asset(name: string, body: Buffer): [string, PageAsset] {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return [name, { body, type: TYPES[extname(name)] ?? 'application/octet-stream', etag }];
}

/**
 * Bundles the page scripts and the stylesheet with esbuild (a build-time dependency), in memory.
 * `npm run build` writes the result to dist/web; the tests and a run from source build on the fly.
 */
export async function buildPageAssets(clientDir: string): Promise<Map<string, PageAsset>> {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: PAGE_ENTRIES.map((entry) => join(clientDir, entry)),
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    outdir: '/assets',
    entryNames: '[name]',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  return new Map(result.outputFiles.map((file) => asset(file.path.split('/').pop()!, Buffer.from(file.contents))));
}

export function readPageAssets(directory: string): Map<string, PageAsset> {
  return new Map(readdirSync(directory).map((name) => asset(name, readFileSync(join(directory, name)))));
}

/**
 * Where things are: compiled, this file is dist/libs/web/src/assets/page-assets.js and the bundle
 * dist/web; run from source (tests, ts-node) there is no bundle and the client sources sit beside.
 */
export function pageAssetLocations(): { clientDir: string; builtDir: string | null } {
  const compiled = __filename.endsWith('.js');
  const root = resolve(__dirname, compiled ? '../../../../..' : '../../../..');
  return { clientDir: join(root, 'libs/web/src/client'), builtDir: compiled ? join(root, 'dist/web') : null };
}

let loading: Promise<Map<string, PageAsset>> | null = null;

/** The built bundle when there is one, else built once per process on first use. */
export function loadPageAssets(): Promise<Map<string, PageAsset>> {
  loading ??= (async () => {
    const { clientDir, builtDir } = pageAssetLocations();
    if (builtDir && existsSync(builtDir)) return readPageAssets(builtDir);
    return buildPageAssets(clientDir);
  })();
  return loading;
}
