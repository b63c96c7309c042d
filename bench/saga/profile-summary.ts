import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The parts of a V8 .cpuprofile this summary reads. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (and per package) of the samples taken after `skipMs` (the service's start-up). */
export function summarise(profile: CpuProfile, skipMs: number, top = 25) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const where = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const url = f.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '');
    return `${f.functionName || '(anonymous)'} ${url}:${f.lineNumber + 1}`;
  };
  // The first frame of the stack that is ours or a package's: what a sample in a builtin is spent for.
  const owner = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)!.callFrame.url;
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
      if (pkg) return pkg;
      if (/\/(apps|libs)\//.test(url)) return /\/((?:apps|libs)\/[^/]+)\//.exec(url)![1];
    }
    return byId.get(id)!.callFrame.functionName || '(native)';
  };
  const self = new Map<string, number>();
  const pkgs = new Map<string, number>();
  let t = profile.startTime;
  let kept = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (t - profile.startTime < skipMs * 1000) continue;
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const id = profile.samples[i];
    const name = byId.get(id)!.callFrame.functionName;
    if (name === '(idle)') continue;
    kept += dt;
    self.set(where(id), (self.get(where(id)) ?? 0) + dt);
    pkgs.set(owner(id), (pkgs.get(owner(id)) ?? 0) + dt);
  }
  const sorted = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, ms]) => ({ ms: +ms.toFixed(1), what: k }));
  return {
    windowMs: +((profile.endTime - profile.startTime) / 1000 - skipMs).toFixed(0),
    busyMs: +kept.toFixed(1),
    byPackage: sorted(pkgs),
    selfTime: sorted(self),
  };
}

/** Usage: node bench/dist/saga/profile-summary.js <dir with .cpuprofile files> [skip first ms, default 20000]. */
if (require.main === module) {
  const dir = process.argv[2];
  const skip = Number(process.argv[3] ?? 20_000);
  const out: Record<string, unknown> = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const summary = summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, skip);
    out[basename(file, '.cpuprofile')] = summary;
    console.log(`\n== ${file}: ${summary.busyMs} ms busy in ${summary.windowMs} ms`);
    console.table(summary.byPackage.slice(0, 12));
    console.table(summary.selfTime.slice(0, 12));
  }
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(out, null, 2));
}
