import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPageAssets, pageAssetLocations } from './page-assets';

/** `npm run build`: bundles the customer pages into dist/web, which the gateway serves at /assets/. */
async function main(): Promise<void> {
  const { clientDir, builtDir } = pageAssetLocations();
  if (!builtDir) throw new Error('run the compiled script (dist/libs/web/src/assets/write-page-assets.js)');
  const assets = await buildPageAssets(clientDir);
  rmSync(builtDir, { recursive: true, force: true });
  mkdirSync(builtDir, { recursive: true });
  for (const [name, { body }] of assets) writeFileSync(join(builtDir, name), body);
  // On stderr: `npm run -s cli -- … --json` pipes the CLI's stdout, and the build runs first.
  process.stderr.write(`customer pages: ${[...assets.keys()].join(', ')} → ${builtDir}\n`);
}

main().catch((error) => {
  process.stderr.write(`building the customer pages failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
