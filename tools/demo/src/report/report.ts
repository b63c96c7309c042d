import { StockSnapshot, formatVerdict } from '@checkout/testing';
import { ReplayReport, replayPassed } from '../replays/replay-report';
import { formatCounts, formatMs, percentile } from './stats';

const MAX_STUCK_SHOWN = 10;

/** Stock as the seed prints it: {available: 0, reserved: 0, sold: 500}. */
export function formatStock(stock: StockSnapshot | null): string {
  if (!stock) return 'stock unknown to inventory';
  const returned = stock.returned !== undefined ? `, returned: ${stock.returned}` : '';
  return `stock {available: ${stock.available}, reserved: ${stock.reserved}, sold: ${stock.sold}${returned}}`;
}

/** "p50 1.84 s, p95 3.10 s" of some latencies. */
export function formatLatency(ms: readonly number[]): string {
  if (ms.length === 0) return 'no paid order';
  return `p50 ${formatMs(percentile(ms, 50))}, p95 ${formatMs(percentile(ms, 95))} (${ms.length} order${ms.length === 1 ? '' : 's'})`;
}

/** The lines of one replay in the table, in the spirit of the seed's "sold 500 of 500, stock now {...}". */
export function formatReplay(r: ReplayReport, width: number): string[] {
  const x = r.result;
  const pad = ' '.repeat(width + 3);
  const other = Object.entries(x.answers.other)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  const lines = [
    `${r.title.padEnd(width)} : ${r.headline}, ${formatStock(x.stock)}`,
    `${pad}${x.wave.shoppers} buyers: ${x.answers.accepted} accepted, ${x.answers.outOfStock} out of stock` +
      (other ? `, ${other}` : '') +
      `; orders ${formatCounts(x.statuses)}`,
    `${pad}charges ${x.charges}, refunds ${x.refunds}, stuck ${x.verdict.stuck.length}; ` +
      `wall ${formatMs(x.wallMs)}; accepted -> order.paid ${formatLatency(x.paidLatencyMs)}`,
    `${pad}${formatVerdict(x.verdict)}`,
    `${pad}${r.contrast}`,
  ];
  if (x.restarted.length)
    lines.push(
      `${pad}note: ${x.restarted.join(', ')} restarted while this replay ran` +
        (x.restarted.includes('psp-simulator')
          ? ' (the PSP simulator keeps its ledger in memory: a restart forgets the charges before it)'
          : ''),
    );
  for (const e of r.expectations.filter((e) => !e.ok)) lines.push(`${pad}FAILED: ${e.text}`);
  for (const s of x.verdict.stuck.slice(0, MAX_STUCK_SHOWN))
    lines.push(
      `${pad}stuck ${s.orderId}: ${s.lastStep}` +
        (s.paymentState ? `, payment ${s.paymentState}` : '') +
        (s.since ? ` since ${s.since}` : ''),
    );
  if (x.verdict.stuck.length > MAX_STUCK_SHOWN)
    lines.push(`${pad}... and ${x.verdict.stuck.length - MAX_STUCK_SHOWN} more stuck`);
  return lines;
}

/** The whole table: one block per replay, then the overall verdict. */
export function formatReport(reports: readonly ReplayReport[]): string {
  const width = Math.max(...reports.map((r) => r.title.length));
  const blocks = reports.map((r) => formatReplay(r, width).join('\n'));
  const failed = reports.filter((r) => !replayPassed(r)).map((r) => r.title);
  const verdict = failed.length
    ? `verdict: NOT clean (${failed.join(', ')})`
    : `verdict: clean (${reports.length} replays: stock conserved, no order charged twice, money matches, every saga ended)`;
  return [...blocks, verdict].join('\n\n');
}
