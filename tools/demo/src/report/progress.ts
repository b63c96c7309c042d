/** Where progress goes: a TTY gets one updating line, anything else (a CI log, a pipe) periodic plain lines. */
export interface ProgressSink {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * A progress indicator for a long wait: on a TTY one line rewritten in place, otherwise a plain line at most
 * every `intervalMs` (and always the last one), so a log shows it is alive without thousands of lines.
 */
export class Progress {
  private lastPlainAt = -Infinity;
  private lastText = '';
  private lastPrinted = '';

  constructor(
    private readonly label: string,
    private readonly sink: ProgressSink = process.stdout,
    private readonly intervalMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Shows the current state. */
  update(text: string): void {
    this.lastText = text;
    if (this.sink.isTTY) {
      this.sink.write(`\r\x1b[2K${this.label}: ${text}`);
      return;
    }
    const now = this.now();
    if (now - this.lastPlainAt < this.intervalMs) return;
    this.lastPlainAt = now;
    this.plain(text);
  }

  /** Ends the indicator with its final state on a line of its own. */
  done(text = this.lastText): void {
    if (this.sink.isTTY) this.sink.write(`\r\x1b[2K${this.label}: ${text}\n`);
    else if (text !== this.lastPrinted) this.plain(text);
  }

  private plain(text: string): void {
    this.lastPrinted = text;
    this.sink.write(`${this.label}: ${text}\n`);
  }
}
