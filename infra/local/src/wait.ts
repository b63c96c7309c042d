let aborted: string | undefined;

/** Makes every waitFor in progress (and every later one, until `resumeWaits`) fail at its next poll. */
export function abortWaits(reason: string): void {
  aborted = reason;
}

/** Lets waitFor wait again after `abortWaits`. */
export function resumeWaits(): void {
  aborted = undefined;
}

/** Polls a condition until it holds or the deadline passes; the only way this repo waits for anything. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  { timeoutMs = 60_000, intervalMs = 200 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (aborted) throw new Error(`${aborted} while waiting for ${what}`);
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
