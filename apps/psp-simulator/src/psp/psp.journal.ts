import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** One change of the simulator's state, as a line of its journal. */
export type JournalEntry =
  | { t: 'charge'; v: { id: string } & Record<string, unknown> }
  | { t: 'refund'; v: { id: string } & Record<string, unknown> }
  | { t: 'idem'; k: string; v: { fingerprint: string; objectId: string } }
  | { t: 'event'; v: { id: string } & Record<string, unknown> }
  | { t: 'delivery'; v: Record<string, unknown> };

/**
 * The simulator's state on disk: an append-only JSON-lines journal of every change, written before the PSP
 * answers, replayed at boot. A PSP does not forget a charge because its process restarted; with a journal,
 * stopping and starting the simulator (an outage) keeps every charge, refund and Idempotency-Key.
 * Appends go to the page cache (no fsync): they survive the process, not the machine.
 */
export class PspJournal {
  constructor(private readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  append(...entries: JournalEntry[]): void {
    appendFileSync(this.path, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  }

  /** Every entry written so far, oldest first; a torn last line (a crash mid-write) is skipped. */
  read(): JournalEntry[] {
    if (!existsSync(this.path)) return [];
    const out: JournalEntry[] = [];
    for (const line of readFileSync(this.path, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        out.push(JSON.parse(line) as JournalEntry);
      } catch {
        // only the last line can be torn; anything else would be a bug worth seeing in the counts
      }
    }
    return out;
  }
}
