import { SagaListBody, SagaViewBody } from './saga-api.client';

const pad = (text: string, width: number) => (text.length >= width ? `${text} ` : text.padEnd(width));

/** A duration for people: 850 ms, 12.3 s, 4 min 5 s, 2 h 3 min. */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
}

/** A saga as a readable sequence: a header with its status, then one line per step, compensations marked. */
export function formatTimeline(saga: SagaViewBody): string[] {
  const s = saga.state;
  const where = s.terminal
    ? `ended${s.durationMs !== null ? ` after ${humanDuration(s.durationMs)}` : ''}`
    : s.waitingFor
      ? `waiting for ${s.waitingFor.step} from ${s.waitingFor.service} for ${humanDuration(s.waitingFor.waitedMs)}`
      : 'in progress';
  const partial = s.complete
    ? ''
    : `  (seen in part: ${s.started ? `${s.missingCauses} cause(s) not recorded yet` : 'no order.created yet'})`;
  const lines = [
    `order ${saga.orderId}  ${s.status}  ${where}${partial}${s.stuck ? `  STUCK since ${s.stuckSince} (${s.stuckReason})` : ''}`,
    `trace ${saga.traceIds.length > 0 ? saga.traceIds.join(', ') : '(none)'}`,
  ];
  for (const step of saga.timeline) {
    const offset = `+${(step.offsetMs / 1000).toFixed(3)}s`;
    const mark = step.compensation ? '<< COMPENSATION' : step.outcome;
    lines.push(
      `  ${pad(offset, 11)}${pad(step.service, 12)}${pad(step.type, 38)}${pad(mark, 16)}${step.detail ?? ''}`.trimEnd(),
    );
  }
  return lines;
}

/** The stuck sagas as one line each: order, status, last step, what it waits for and how long. */
export function formatStuck(list: SagaListBody, now: Date): string[] {
  if (list.total === 0) return ['no saga is stuck'];
  const lines = [
    `${list.total} stuck saga(s)${list.total > list.sagas.length ? `, newest ${list.sagas.length}` : ''}:`,
  ];
  for (const s of list.sagas) {
    const waiting = s.waitingFor
      ? `waiting for ${s.waitingFor.step} from ${s.waitingFor.service} for ${humanDuration(now.getTime() - Date.parse(s.waitingFor.since))}`
      : 'waiting for nothing known';
    lines.push(`  ${s.orderId}  ${pad(s.status, 17)}last ${pad(s.lastStep.type, 38)}${waiting}`.trimEnd());
  }
  return lines;
}
