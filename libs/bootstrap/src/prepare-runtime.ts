import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertEmbeddedStoresWritable, ensureDataDir } from '@lib/runtime/stores';
import { assertPortNameable, ConfigError, loadConfig, randomBase62, type AppConfig } from '@lib/shared';

export interface PreparedRuntime {
  config: AppConfig;
  /** set when this start generated the admin token (it is printed once) */
  generatedAdminToken: boolean;
  /** the file holding the admin token; null when ADMIN_TOKEN gives it */
  adminTokenFile: string | null;
}

/**
 * Reads the configuration and makes sure DATA_DIR and the admin token exist. Bad configuration
 * ends the process with one line naming the variable.
 */
export function prepareRuntime(env: NodeJS.ProcessEnv = process.env, options: { listensOnPort?: boolean } = {}): PreparedRuntime {
  let config: AppConfig;
  try {
    config = loadConfig(env);
    if (options.listensOnPort) assertPortNameable(env);
    ensureDataDir(config);
    assertEmbeddedStoresWritable(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  let generatedAdminToken = false;
  let adminTokenFile: string | null = null;
  if (!config.adminToken) {
    const file = join(config.dataDir, 'admin-token');
    adminTokenFile = file;
    if (existsSync(file)) {
      config.adminToken = readFileSync(file, 'utf8').trim();
    } else {
      config.adminToken = `adm_${randomBase62(40)}`;
      writeFileSync(file, `${config.adminToken}\n`, { mode: 0o600 });
      generatedAdminToken = true;
    }
  }
  return { config, generatedAdminToken, adminTokenFile };
}
