import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './product-process';

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'engines', 'kafka.sh');
const run = promisify(execFile);

/**
 * A broker of one test's own, for a test that stops and restarts it: `scripts/engines/kafka.sh`
 * on two free ports with its data, configuration and log in a temporary directory, so the engine
 * suite's shared broker (127.0.0.1:19092, .engines/kafka) is never touched.
 */
export class OwnKafkaBroker {
  private constructor(
    /** `host:port`, as KAFKA_BROKERS takes it */
    readonly address: string,
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Picks the ports and the directory; nothing runs until `start`. */
  static async create(): Promise<OwnKafkaBroker> {
    const port = await freePort();
    let controllerPort = await freePort();
    while (controllerPort === port) controllerPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'kafka-broker-'));
    const env = { ...process.env, KAFKA_DIR: dir, KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(controllerPort) };
    return new OwnKafkaBroker(`127.0.0.1:${port}`, dir, env);
  }

  /** Resolves once the broker serves; the first start formats its storage, a later one keeps the data. */
  start(): Promise<void> {
    return this.script('start');
  }

  /** Resolves once the broker process has exited (SIGTERM, SIGKILL after 60 s). */
  stop(): Promise<void> {
    return this.script('stop');
  }

  /** Stops the broker if it runs and deletes its directory. */
  async remove(): Promise<void> {
    try {
      await this.stop();
    } catch (error) {
      // The directory holds the only record of the pid: end the process before deleting it.
      const pid = this.pid();
      try {
        if (pid !== null) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      throw error;
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private pid(): number | null {
    try {
      const pid = Number(readFileSync(join(this.dir, 'kafka.pid'), 'utf8').trim());
      return pid > 0 ? pid : null;
    } catch {
      return null; // never started, or stopped
    }
  }

  private async script(command: 'start' | 'stop'): Promise<void> {
    try {
      await run('bash', [SCRIPT, command], { env: this.env, cwd: ROOT });
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`kafka.sh ${command} (${this.address}) failed: ${stderr?.trim() || String(error)}`);
    }
  }
}
