import { ChaosContext } from '../context';
import { FaultCase, runFaultCase } from '../fault-case';
import { CaseResult } from '../verdict';

/** A chaos scenario: `npm run chaos -- --scenarios=<name>` runs it; it returns one result per case. */
export interface Scenario {
  name: string;
  summary: string;
  run(ctx: ChaosContext): Promise<CaseResult[]>;
}

/** A scenario of fault cases run one after the other (only those named by `--cases`, when given). */
export function faultScenario(name: string, summary: string, cases: readonly FaultCase[]): Scenario {
  return {
    name,
    summary,
    async run(ctx) {
      const picked = cases.filter(
        (c) => ctx.options.cases.length === 0 || ctx.options.cases.includes(c.name),
      );
      const results: CaseResult[] = [];
      for (const c of picked) results.push(await runFaultCase(ctx, name, c));
      return results;
    },
  };
}

/** A case of a list by name; an unknown name throws, listing the known ones. */
export function pick(cases: readonly FaultCase[], name: string): FaultCase {
  const found = cases.find((c) => c.name === name);
  if (!found) throw new Error(`no case ${name} (known: ${cases.map((c) => c.name).join(', ')})`);
  return found;
}
