import fc from 'fast-check';

/** Cases per property: FUZZ_RUNS, else the CI-cheap default given by the spec. */
export const numRuns = (fallback: number): number => {
  const raw = process.env.FUZZ_RUNS;
  const n = raw ? Number(raw) : fallback;
  if (!Number.isInteger(n) || n < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${raw}`);
  return n;
};

/** FUZZ_SEED replays a failed run (fast-check prints the seed and path of every failure). */
const fixedSeed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

/**
 * fast-check's assert with this suite's settings: bounded runs, the seed printed up front and in the failure
 * (with the shrunk counterexample), no time-based interruption (the stack answers at its own pace).
 */
export async function checkProperty<T>(
  name: string,
  property: fc.IAsyncPropertyWithHooks<[T]>,
  runs: number,
): Promise<void> {
  const seed = fixedSeed ?? (Date.now() ^ (Math.random() * 0x100000000)) >>> 0;
  const parameters: fc.Parameters<[T]> = { numRuns: numRuns(runs), seed, endOnFailure: false };
  if (process.env.FUZZ_PATH) parameters.path = process.env.FUZZ_PATH;
  try {
    await fc.assert(property, parameters);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const cause = (error as { cause?: unknown }).cause;
    const why = cause instanceof Error ? `\n${cause.message}` : '';
    throw new Error(`${name}: replay with FUZZ_SEED=${seed}\n${message}${why}`, { cause: error });
  }
}
