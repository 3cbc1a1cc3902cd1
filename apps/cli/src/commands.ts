import { createWriteStream, linkSync, unlinkSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { atGeneration, checkpointName, liveProjections, rebuildProjections, upcast, type Projection } from '@lib/event-sourcing';
import type { EventStore, RecordedEvent } from '@lib/event-store';
import type { ReadStore } from '@lib/read-store';
import { organizationStream } from '@lib/organizations/domain/organization.events';
import { AUDIT_SETTLING, auditQuote } from '@lib/quotes/application/quote-audit';
import { RELAY_CHECKPOINT } from '@lib/runtime/relay';
import { redactEventData, redactSecretShapes } from './export-redaction';
import { closed, drained } from './output';
import { ProgressReporter } from './progress';
import { readRebuildLease, RebuildLease, runningRebuild } from './rebuild-lease';
import { UsageError } from './usage-error';

/** What a command needs: the same ports the apps use, and where it writes. */
export interface CliContext {
  events: EventStore;
  reads: ReadStore;
  /** every projection of the product (loads every domain library) */
  projections: () => Projection[];
  out: Writable & { isTTY?: boolean };
  err: Writable & { isTTY?: boolean };
}


export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const line = (stream: Writable, text = '') => stream.write(`${text}\n`);

function pad(rows: string[][]): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}

/** projections:list / projections:status — name, version, live generation, checkpoint, lag. */
export async function projectionStatus(context: CliContext, json: boolean): Promise<number> {
  const live = await liveProjections(context.reads, context.projections());
  const running = runningRebuild(await readRebuildLease(context.reads));
  const read = await Promise.all(
    live.map(async (projection) => {
      const checkpoint = (await context.reads.getCheckpoint(checkpointName(projection))) ?? 0;
      const next = atGeneration(projection, (projection.generation ?? 0) + 1);
      const rebuilding = await context.reads.getCheckpoint(checkpointName(next));
      return {
        name: projection.name,
        version: projection.version,
        generation: projection.generation ?? 0,
        checkpoint,
        rebuild: rebuilding === null ? null : { generation: next.generation, checkpoint: rebuilding },
        /** the rebuild of the projection that is running now, if any */
        running: running?.projections.includes(projection.name) ? { pid: running.pid, host: running.host, startedAt: running.startedAt } : null,
      };
    }),
  );
  // Read after the checkpoints: a projector applying new events meanwhile cannot seem to be past it.
  const head = await context.events.headPosition();
  const rows = read.map(({ rebuild, running, ...row }) => ({
    ...row,
    lag: Math.max(0, head - row.checkpoint),
    /** how far the checkpoint is past the head: not 0 only when the read store does not belong to this log */
    ahead: Math.max(0, row.checkpoint - head),
    rebuild,
    running,
  }));
  if (json) {
    line(context.out, JSON.stringify({ head, projections: rows }));
    return EXIT.ok;
  }
  const table = [
    ['NAME', 'VERSION', 'GENERATION', 'CHECKPOINT', 'LAG', 'REBUILD'],
    ...rows.map((row) => [
      row.name,
      String(row.version),
      String(row.generation),
      String(row.checkpoint),
      row.ahead > 0 ? `ahead by ${row.ahead}` : String(row.lag),
      rebuildState(row),
    ]),
  ];
  for (const text of pad(table)) line(context.out, text);
  line(context.out, `head of the event log: ${head}`);
  const ahead = rows.filter((row) => row.ahead > 0).map((row) => row.name);
  if (ahead.length > 0) {
    line(context.err, `warning: ${ahead.join(', ')} ${ahead.length > 1 ? 'are' : 'is'} past the head of the event log: the read store does not belong to this log (restored from a later moment?); the projector would skip the next events. See Restore in docs/operations.md`);
  }
  return EXIT.ok;
}

/** The REBUILD column: a running rebuild and where it stands, or one that stopped and waits to be run again. */
function rebuildState(row: { rebuild: { generation?: number; checkpoint: number } | null; running: { pid: number; host: string } | null }): string {
  const at = row.rebuild ? `g${row.rebuild.generation} at ${row.rebuild.checkpoint} ` : '';
  if (row.running) return `${at}running (pid ${row.running.pid} on ${row.running.host})`.trimStart();
  return row.rebuild ? `${at}(unfinished; run projections:rebuild to continue)` : '-';
}

/** projections:rebuild <name>… | --all (names or --all, as main.ts checks before the stores are opened) */
export async function rebuild(context: CliContext, names: string[], all: boolean, options: { batchSize?: number; switchGraceMs?: number }): Promise<number> {
  const every = context.projections();
  const known = new Map(every.map((projection) => [projection.name, projection]));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new UsageError(`unknown projection ${[...new Set(unknown)].map((name) => JSON.stringify(name)).join(', ')}; known: ${[...known.keys()].join(', ')}`);
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  if (repeated.length > 0) throw new UsageError(`${[...new Set(repeated)].map((name) => JSON.stringify(name)).join(', ')} named more than once; name each projection once`);
  const projections = all ? every : names.map((name) => known.get(name)!);
  const lease = await RebuildLease.acquire(context.reads, projections.map((projection) => projection.name));
  const progress = new ProgressReporter(context.err);
  let told = false;
  const result = await rebuildProjections({
    events: context.events,
    store: context.reads,
    projections,
    batchSize: options.batchSize,
    switchGraceMs: options.switchGraceMs,
    onProgress: (state) => {
      lease.check();
      // Said as it resumes, before the first page (until 2026-11-27 only once it had finished; found by a review).
      if (!told && state.resumedFrom > 0) line(context.out, `resumed from position ${state.resumedFrom}`);
      told = true;
      progress.update(state);
    },
  }).finally(() => lease.release());
  progress.done();
  for (const projection of result.projections) {
    line(context.out, `${projection.name} v${projection.version}: generation ${projection.from} → ${projection.to}, live at position ${result.position}`);
  }
  if (result.dropped.length > 0) line(context.out, `dropped ${result.dropped.join(', ')}`);
  return EXIT.ok;
}

const time = (ms: number) => new Date(ms).toISOString();

/** audit:quote <quoteId> — every version as the stream tells it, checked against what is stored. */
export async function auditQuoteCommand(context: CliContext, quoteId: string, json: boolean): Promise<number> {
  const audit = await auditQuote(context.events, context.reads, quoteId);
  if (!audit) {
    line(context.err, `quote ${quoteId} has no events`);
    return EXIT.failed;
  }
  if (json) {
    line(context.out, JSON.stringify(audit));
  } else {
    line(context.out, `quote ${quoteId}: ${audit.steps.length} events`);
    for (const step of audit.steps) {
      line(
        context.out,
        `#${step.revision} ${time(step.at)} ${step.trigger} by ${step.actor ?? 'unknown'} → version ${step.version} (${step.status}), ` +
          `subtotal ${step.totals.subtotal}, tax ${step.totals.taxAmount}, total ${step.totals.total} ${step.currency}`,
      );
      if (step.changeDescription) line(context.out, `    change: ${step.changeDescription}`);
      if (step.details) line(context.out, `    ${Object.entries(step.details).map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join(', ')}`);
      if (step.changedTerms) line(context.out, `    terms: ${JSON.stringify(step.changedTerms)}`);
      for (const item of step.lineItems ?? []) {
        line(context.out, `    ${item.order + 1}. ${item.description} — ${item.quantity} × ${item.unitPrice} = ${item.total} (${item.itemType})`);
      }
    }
  }
  // The verdict is part of the report (`audit:quote q > report.txt`); with --json, stdout is the
  // JSON alone (its `mismatches` hold the same), and the verdict goes to stderr.
  const verdict = json ? context.err : context.out;
  if (audit.changedDuringAudit) {
    line(verdict, `CHANGING: the quote changed while it was audited, each of ${AUDIT_SETTLING.attempts} times (run the audit again when it is not being edited); ${audit.mismatches.length} place(s) differ:`);
    for (const mismatch of audit.mismatches) line(verdict, `  ${mismatch}`);
    return EXIT.failed;
  }
  if (audit.mismatches.length > 0) {
    line(verdict, `MISMATCH: the stored read model differs from the replay in ${audit.mismatches.length} place(s):`);
    for (const mismatch of audit.mismatches) line(verdict, `  ${mismatch}`);
    return EXIT.failed;
  }
  line(verdict, 'ok: the read model and every stored version equal the replay');
  return EXIT.ok;
}

/**
 * Who or what caused an event, from its metadata (`apiKey:<id>`, `admin`, `customer:<id>`,
 * `pricing:<delivery>`, `system[:<part>]`): `{ type }`, with `id` when the type has one, as documented.
 * A system actor keeps the part of the product that acted (`system:quote-expiry` → `id:
 * "quote-expiry"`), as audit:quote shows it (it was dropped until 2026-11-27, found by a review).
 */
export function actorOf(event: RecordedEvent): { type: string; id?: string } {
  const actor = event.metadata.actor;
  if (typeof actor !== 'string' || actor === '') return { type: 'unrecorded' };
  const [kind, ...rest] = actor.split(':');
  const id = rest.join(':');
  switch (kind) {
    case 'apiKey':
      return { type: 'api_key', id };
    case 'admin':
      return { type: 'admin' };
    case 'customer':
      // the session or quote the customer's token opened, never the token itself
      return { type: 'customer', id };
    case 'pricing':
      // the webhook delivery whose capability URL it used
      return { type: 'pricing_partner', id };
    case 'system':
      return id ? { type: 'system', id } : { type: 'system' };
    default:
      return { type: 'other', id: actor };
  }
}

/** audit:export --org <id> [--from] [--to] [--out] — the organization's events as NDJSON, secrets and capability tokens redacted. */
export async function auditExport(context: CliContext, options: { organizationId: string; from?: number; to?: number; out?: string }): Promise<number> {
  // A mistyped id would export nothing, which reads as an organization without events. Asked of
  // the log, not the read model, which may lag it or be lost (a restore of events.db alone).
  if ((await context.events.readStream(organizationStream(options.organizationId), { maxCount: 1 })).length === 0) {
    line(context.err, `unknown organization ${options.organizationId}: the event log has no such organization`);
    return EXIT.failed;
  }
  // Readable by its owner only, like a backup: customers' names and e-mail addresses are in it.
  // Written as `<out>.partial` and given its name once whole, so an export stopped part-way (a
  // signal, a full disk) never leaves a file of complete lines that reads as the whole export
  // (2026-11-27, found by a review). `wx`: a file made under either name meanwhile is not written
  // over (one there before is refused as wrong usage).
  const partial = options.out === undefined ? undefined : `${options.out}.partial`;
  const target: Writable = partial ? createWriteStream(partial, { flags: 'wx', mode: 0o600 }) : context.out;
  // A file that cannot be written is destroyed with its error, which `finished` below reports.
  if (options.out) target.on('error', () => undefined);
  let position = 0;
  let written = 0;
  while (!closed(target)) {
    const page = await context.events.readAll({ after: position, maxCount: 5_000 });
    if (page.length === 0) break;
    position = page[page.length - 1].position;
    for (const recorded of page) {
      const event = upcast(recorded);
      const data = event.data as { organizationId?: unknown } | null;
      if (data?.organizationId !== options.organizationId) continue;
      if (options.from !== undefined && recorded.recordedAt < options.from) continue;
      if (options.to !== undefined && recorded.recordedAt >= options.to) continue;
      const record = {
        id: recorded.id,
        position: recorded.position,
        streamId: recorded.streamId,
        revision: recorded.revision,
        type: event.type,
        storedType: recorded.type,
        recordedAt: new Date(recorded.recordedAt).toISOString(),
        // the file leaves the service: no secret or capability token in it (export-redaction.ts)
        actor: redactSecretShapes(actorOf(recorded)),
        correlationId: redactSecretShapes(recorded.metadata.correlationId ?? null),
        causationId: redactSecretShapes(recorded.metadata.causationId ?? null),
        data: redactEventData({ type: event.type, storedType: recorded.type }, event.data),
      };
      if (!target.write(`${JSON.stringify(record)}\n`)) await drained(target);
      if (closed(target)) break;
      written++;
    }
  }
  if (partial && options.out) {
    target.end();
    await finished(target);
    // a link, not a rename: a file made under that name meanwhile is not written over
    linkSync(partial, options.out);
    unlinkSync(partial);
  } else if (closed(target)) {
    // The reader stopped reading (`| head`): it has what it wanted, and there is no one to tell.
    return EXIT.ok;
  }
  // the range as read, so that a range of Unix seconds taken for milliseconds shows (1970-01-21…)
  const range = [options.from !== undefined ? ` from ${new Date(options.from).toISOString()}` : '', options.to !== undefined ? ` to ${new Date(options.to).toISOString()}` : ''].join('');
  line(context.err, `exported ${written} events of organization ${options.organizationId}${range ? `, stored${range}` : ''}`);
  return EXIT.ok;
}

/**
 * outbox:skip-to-head — moves the outbox's relay checkpoint to the head of the event log, so the
 * outbox relays only events stored from now on. For a store restored from `events.db` alone: its
 * delivery log and mail queue are gone with `read-models.db`, so without this the outbox would
 * relay the whole log again and send every webhook and quote e-mail a second time. Events stored
 * before the head that were never relayed lose their webhooks and e-mails: that is the choice the
 * operator makes. Run it with the outbox stopped.
 */
export async function skipRelayToHead(context: CliContext): Promise<number> {
  // The checkpoint before the head: a relay running meanwhile (it should not) cannot seem past it.
  const checkpoint = await context.reads.getCheckpoint(RELAY_CHECKPOINT);
  const head = await context.events.headPosition();
  if (checkpoint === head) {
    line(context.out, `the relay is at position ${checkpoint}, the head of the log: nothing to skip`);
    return EXIT.ok;
  }
  await context.reads.saveCheckpoint(RELAY_CHECKPOINT, head);
  if (checkpoint !== null && checkpoint > head) {
    // The read store is from a later moment than the log (or another log): the positions past the
    // head were never stored in this one, and the next events will take them. Back to the head,
    // so that they are relayed; no event of this log is relayed twice.
    line(context.out, `relay checkpoint ${checkpoint} → ${head}: it was past the head of the log (the read store is from a later moment than the log); the outbox relays the events stored after position ${head}`);
    return EXIT.ok;
  }
  line(context.out, `relay checkpoint ${checkpoint ?? 'unset (from the start)'} → ${head}: the outbox relays only events after position ${head}`);
  return EXIT.ok;
}
