/**
 * Reads V8 `.cpuprofile` files (node --cpu-prof) and tells where the time went: self time by area
 * (a package in node_modules, a library of this repository, Node internals, GC, idle) and the
 * functions with the most self and inclusive time. Also runnable on its own:
 *   node dist/bench/cpu-profile-summary.js <file.cpuprofile> [top] [regex]
 * (with a regex: which repository code the time of the matching functions is spent for).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(program)') return '(program: native, not attributed)';
    return `native ${functionName || '(anonymous)'}`;
  }
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return `npm ${modules[1]}`;
  if (url.startsWith('node:')) return `node ${url.slice(5).split('/').slice(0, 2).join('/')}`;
  const repo = /\/dist\/(libs\/[^/]+|apps\/[^/]+|bench)/.exec(url);
  if (repo) return repo[1];
  return url;
}

const label = (frame: CallFrame) => {
  const file = frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
};

export interface ProfileSummary {
  totalMs: number;
  areas: Array<[string, number]>;
  self: Array<[string, number]>;
  inclusive: Array<[string, number]>;
}

/** A stretch of the profiled run, in the profile's clock: process.hrtime in µs (see monotonicUs). */
export interface ProfileWindow {
  label: string;
  fromUs: number;
  toUs: number;
}

/** Now on the clock V8 stamps CPU profile samples with (CLOCK_MONOTONIC, µs), in any process. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

export function summarizeProfile(profile: CpuProfile, window?: ProfileWindow): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.fromUs || at >= window.toUs)) continue;
    const delta = profile.timeDeltas[i + 1] ?? 0; // a sample's time runs until the next sample
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + delta);
  }
  const areas = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    total += us;
    areas.set(areaOf(node.callFrame), (areas.get(areaOf(node.callFrame)) ?? 0) + us);
    self.set(label(node.callFrame), (self.get(label(node.callFrame)) ?? 0) + us);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!frame.url) continue;
      onStack.add(label(frame));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) => [...m].map(([k, v]) => [k, v / 1000] as [string, number]).sort((a, b) => b[1] - a[1]);
  return { totalMs: total / 1000, areas: sorted(areas), self: sorted(self), inclusive: sorted(inclusive) };
}

/** Markdown lines for the report. */
export function summarizeCpuProfiles(files: string[], title: string, top = 15, windows: Array<ProfileWindow | undefined> = [undefined]): string[] {
  const lines: string[] = [];
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    for (const window of windows) lines.push(...summaryLines(file, profile, title, top, window));
  }
  return lines;
}

function summaryLines(file: string, profile: CpuProfile, title: string, top: number, window: ProfileWindow | undefined): string[] {
  const summary = summarizeProfile(profile, window);
  const busy = summary.totalMs - (summary.areas.find(([a]) => a === '(idle)')?.[1] ?? 0);
  const pct = (v: number) => `${((100 * v) / busy).toFixed(1)} %`;
  const lines = [
    `#### ${title}${window ? `, ${window.label}` : ''}`,
    '',
    `\`${file}\`: ${(summary.totalMs / 1000).toFixed(1)} s ${window ? 'in this window' : 'profiled'}, ${(busy / 1000).toFixed(1)} s not idle (percentages are of the non-idle time).`,
    '',
    '| self time by area | ms | share |',
    '|---|---|---|',
  ];
  for (const [area, v] of summary.areas.filter(([a]) => a !== '(idle)').slice(0, top)) lines.push(`| ${area} | ${v.toFixed(0)} | ${pct(v)} |`);
  lines.push('', '| function (self) | ms | share |', '|---|---|---|');
  for (const [name, v] of summary.self.filter(([n]) => !n.startsWith('(idle)')).slice(0, top)) lines.push(`| ${name} | ${v.toFixed(0)} | ${pct(v)} |`);
  lines.push('', '| function (inclusive, repository code only) | ms | share |', '|---|---|---|');
  for (const [name, v] of summary.inclusive.filter(([n]) => n.includes('dist/libs') || n.includes('dist/apps')).slice(0, top)) lines.push(`| ${name} | ${v.toFixed(0)} | ${pct(v)} |`);
  lines.push('');
  return lines;
}

/**
 * Time of the samples whose stack holds a function matching `target`, grouped by the nearest
 * `depth` repository frames that called it (who pays for a hot function).
 */
export function callersOf(profile: CpuProfile, target: RegExp, depth = 3): Array<[string, number]> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  const byChain = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const chain: string[] = [];
    let hit = false;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const name = label(frame);
      if (target.test(name)) hit = true;
      else if (hit && frame.url.includes('/dist/')) chain.push(name);
    }
    if (!hit) continue;
    const key = chain.slice(0, depth).join(' ← ');
    byChain.set(key, (byChain.get(key) ?? 0) + us);
  }
  return [...byChain].map(([k, v]) => [k, v / 1000] as [string, number]).sort((a, b) => b[1] - a[1]);
}

if (require.main === module) {
  const [file, top, callers] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node dist/bench/cpu-profile-summary.js <file.cpuprofile> [top] [regex: who calls it]\n');
    process.exit(2);
  }
  if (callers) {
    for (const [chain, v] of callersOf(JSON.parse(readFileSync(file, 'utf8')), new RegExp(callers)).slice(0, Number(top ?? 25))) {
      process.stdout.write(`${v.toFixed(0).padStart(8)} ms  ${chain}\n`);
    }
  } else {
    process.stdout.write(`${summarizeCpuProfiles([file], 'CPU profile', Number(top ?? 25)).join('\n')}\n`);
  }
}
