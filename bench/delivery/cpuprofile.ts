/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self
 * time, and self time grouped by where the code lives (a package under node_modules, the
 * product's own packages, Node internals, GC, idle). Used by bench/delivery.ts when
 * BENCH_CPU_PROF=1; also runnable on its own:
 *   npx tsx bench/delivery/cpuprofile.ts <file.cpuprofile> [top]
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
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Wall time minus idle: what the process spent on the CPU (JS, GC, native). */
  busyMs: number;
  top: { fn: string; where: string; selfMs: number; pctOfBusy: number }[];
  byArea: { area: string; selfMs: number; pctOfBusy: number }[];
}

function isProfile(v: unknown): v is CpuProfile {
  return (
    typeof v === 'object' &&
    v !== null &&
    Array.isArray((v as CpuProfile).nodes) &&
    Array.isArray((v as CpuProfile).samples) &&
    Array.isArray((v as CpuProfile).timeDeltas)
  );
}

/** Where a frame's code lives, coarse enough to add up. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(program)') return '(program: native, not attributed)';
    return `(native) ${functionName || 'anonymous'}`;
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    const pkg = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? '?');
    return `node_modules/${pkg}`;
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] ?? ''}`;
  const m = /\/(apps|packages)\/([^/]+)\//.exec(url);
  if (m) return `${m[1]}/${m[2]}`;
  return url.replace(/^file:\/\//, '');
}

const shortUrl = (url: string): string =>
  url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(apps|packages)\//, '$1/');

export function summarizeCpuProfile(file: string, top = 20): ProfileSummary {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isProfile(parsed)) throw new Error(`${file} is not a .cpuprofile`);
  const byId = new Map(parsed.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; attribute it to sample i (V8's convention).
  parsed.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (parsed.timeDeltas[i] ?? 0));
  });
  const fns = new Map<string, { fn: string; where: string; us: number }>();
  const areas = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    total += us;
    const f = node.callFrame;
    const area = areaOf(f);
    if (area === '(idle)') idle += us;
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName}@${where}`;
    const entry = fns.get(key) ?? { fn: f.functionName || '(anonymous)', where, us: 0 };
    entry.us += us;
    fns.set(key, entry);
  }
  const busy = Math.max(1, total - idle);
  const ms = (us: number) => Number((us / 1000).toFixed(1));
  const pct = (us: number) => Number(((100 * us) / busy).toFixed(1));
  return {
    file,
    totalMs: ms(total),
    busyMs: ms(total - idle),
    top: [...fns.values()]
      .filter((e) => e.fn !== '(idle)')
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({ fn: e.fn, where: e.where, selfMs: ms(e.us), pctOfBusy: pct(e.us) })),
    byArea: [...areas]
      .filter(([a]) => a !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => ({ area, selfMs: ms(us), pctOfBusy: pct(us) })),
  };
}

export function formatProfile(s: ProfileSummary): string {
  const lines = [
    `${s.file}: ${s.totalMs.toFixed(0)} ms profiled, ${s.busyMs.toFixed(0)} ms busy (not idle)`,
    '  self time by area (% of busy):',
    ...s.byArea.map(
      (a) =>
        `    ${a.pctOfBusy.toFixed(1).padStart(5)}%  ${a.selfMs.toFixed(0).padStart(7)} ms  ${a.area}`,
    ),
    '  top functions by self time (% of busy):',
    ...s.top.map(
      (t) =>
        `    ${t.pctOfBusy.toFixed(1).padStart(5)}%  ${t.selfMs.toFixed(0).padStart(7)} ms  ${t.fn}  ${t.where}`,
    ),
  ];
  return lines.join('\n');
}

if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: tsx bench/delivery/cpuprofile.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatProfile(summarizeCpuProfile(file, Number(top ?? 25)))}\n`);
}
