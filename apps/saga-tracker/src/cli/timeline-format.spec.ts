import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { SagaListBody, SagaViewBody } from './saga-api.client';
import { formatStuck, formatTimeline, humanDuration } from './timeline-format';

const ORDER = '0b7e7c1e-3a1c-4b55-9d0e-1f2a3b4c5d6e';
const id = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
const step = (
  index: number,
  type: string,
  service: string,
  outcome: string,
  offsetMs: number,
  detail: string | null = null,
) => ({
  index,
  eventId: id(index),
  type,
  service: service as 'order',
  outcome: outcome as 'progress',
  compensation: outcome === 'compensation',
  occurredAt: new Date(Date.UTC(2026, 0, 1) + offsetMs).toISOString(),
  recordedAt: new Date(Date.UTC(2026, 0, 1) + offsetMs + 5).toISOString(),
  offsetMs,
  causationId: index === 0 ? null : id(index - 1),
  causedBy: index === 0 ? null : index - 1,
  traceId: 'a'.repeat(32),
  traceparent: null,
  sequence: 1,
  detail,
});

const declined: SagaViewBody = {
  orderId: ORDER,
  tenantId: 'acme',
  traceIds: ['a'.repeat(32)],
  state: {
    status: 'CANCELLED',
    terminal: true,
    started: true,
    complete: true,
    missingCauses: 0,
    startedAt: '2026-01-01T00:00:00.000Z',
    terminalAt: '2026-01-01T00:00:01.250Z',
    durationMs: 1250,
    compensated: true,
    lastStep: {
      eventId: id(3),
      type: 'inventory.released',
      service: 'inventory',
      outcome: 'compensation',
      occurredAt: '2026-01-01T00:00:01.250Z',
    },
    waitingFor: null,
    stuck: false,
    stuckSince: null,
    stuckReason: null,
    deadline: null,
    stepCount: 4,
  },
  timeline: [
    step(0, 'order.created', 'order', 'progress', 0),
    step(1, 'inventory.reserved', 'inventory', 'progress', 120),
    step(2, 'payment.failed', 'payment', 'failure', 900, 'card_declined, via response'),
    step(3, 'inventory.released', 'inventory', 'compensation', 1250, 'payment_failed'),
  ],
};

describe('CLI formatting', () => {
  it('prints one line per step with relative time, service, event and outcome, compensations marked', () => {
    const lines = formatTimeline(declined);
    assert.equal(lines[0], `order ${ORDER}  CANCELLED  ended after 1.3 s`);
    assert.equal(lines[1], `trace ${'a'.repeat(32)}`);
    assert.deepEqual(
      lines.slice(2).map((l) =>
        l
          .trim()
          .split(/\s{2,}|\s(?=\S)/)
          .slice(0, 3),
      ),
      [
        ['+0.000s', 'order', 'order.created'],
        ['+0.120s', 'inventory', 'inventory.reserved'],
        ['+0.900s', 'payment', 'payment.failed'],
        ['+1.250s', 'inventory', 'inventory.released'],
      ],
    );
    assert.match(lines[4], /failure\s+card_declined, via response$/);
    assert.match(lines[5], /<< COMPENSATION\s+payment_failed$/);
    assert.equal(lines.filter((l) => l.includes('COMPENSATION')).length, 1);
  });

  it('says what a running saga waits for, and when it is stuck or seen only in part', () => {
    const running: SagaViewBody = {
      ...declined,
      state: {
        ...declined.state,
        status: 'AWAITING_PAYMENT',
        terminal: false,
        complete: false,
        missingCauses: 1,
        waitingFor: {
          step: 'payment',
          service: 'payment',
          compensation: false,
          since: '2026-01-01T00:00:00.120Z',
          waitedMs: 75_000,
        },
        stuck: true,
        stuckSince: '2026-01-01T00:01:00.000Z',
        stuckReason: 'step-timeout',
      },
    };
    assert.equal(
      formatTimeline(running)[0],
      `order ${ORDER}  AWAITING_PAYMENT  waiting for payment from payment for 1 min 15 s  (seen in part: 1 cause(s) not recorded yet)  STUCK since 2026-01-01T00:01:00.000Z (step-timeout)`,
    );
  });

  it('lists stuck sagas one per line, and says so when there are none', () => {
    const list: SagaListBody = {
      total: 3,
      sagas: [
        {
          orderId: ORDER,
          status: 'AWAITING_PAYMENT',
          terminal: false,
          startedAt: '2026-01-01T00:00:00.000Z',
          lastStep: {
            type: 'inventory.reserved',
            service: 'inventory',
            outcome: 'progress',
            occurredAt: '2026-01-01T00:00:00.120Z',
          },
          waitingFor: {
            step: 'payment',
            service: 'payment',
            compensation: false,
            since: '2026-01-01T00:00:00.120Z',
            waitedMs: 1,
          },
          stuck: true,
          stuckSince: '2026-01-01T00:00:15.120Z',
          stuckReason: 'step-timeout',
        },
      ],
    };
    const lines = formatStuck(list, new Date('2026-01-01T00:00:30.120Z'));
    assert.equal(lines[0], '3 stuck saga(s), newest 1:');
    assert.match(
      lines[1],
      new RegExp(
        `^  ${ORDER}  AWAITING_PAYMENT\\s+last inventory.reserved\\s+waiting for payment from payment for 30.0 s$`,
      ),
    );
    assert.deepEqual(formatStuck({ total: 0, sagas: [] }, new Date()), ['no saga is stuck']);
  });

  it('says durations the way people read them', () => {
    assert.equal(humanDuration(850), '850 ms');
    assert.equal(humanDuration(12_340), '12.3 s');
    assert.equal(humanDuration(245_000), '4 min 5 s');
    assert.equal(humanDuration(7_380_000), '2 h 3 min');
  });
});
