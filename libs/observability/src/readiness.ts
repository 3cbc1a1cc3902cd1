import { Injectable } from '@nestjs/common';

/** One dependency's verdict: null when fine, else what is wrong (named in the /readyz body). */
export type ReadinessProbe = () => Promise<string | null>;

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  checks: Record<string, { ok: boolean; problem?: string }>;
}

/** A probe that has not answered by then counts as failed: /readyz must answer promptly. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Whether this process can do its work now. Each part of the process registers a probe for what
 * it depends on (stores, bus, projection lag); a stopping process is not ready, so a load
 * balancer stops sending it requests while it drains.
 */
@Injectable()
export class Readiness {
  private readonly probes = new Map<string, ReadinessProbe>();
  private stopping = false;

  register(name: string, probe: ReadinessProbe): void {
    this.probes.set(name, probe);
  }

  markStopping(): void {
    this.stopping = true;
  }

  async check(): Promise<ReadinessReport> {
    const checks: ReadinessReport['checks'] = {};
    if (this.stopping) checks.process = { ok: false, problem: 'shutting down' };
    await Promise.all(
      [...this.probes].map(async ([name, probe]) => {
        const problem = await withTimeout(probe()).catch((error) => (error instanceof Error ? error.message : String(error)) || 'failed');
        checks[name] = problem === null ? { ok: true } : { ok: false, problem };
      }),
    );
    const ready = Object.values(checks).every((check) => check.ok);
    return { status: ready ? 'ready' : 'not_ready', checks };
  }
}

function withTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
