import { z } from 'zod';
import { ORDER_STATUSES } from '../order-status';
import { OrderId } from '../primitives';
import { ServiceApi } from './api';
import { Instant, OrderIdParam } from './common';

/** The services a saga step belongs to. */
export const SAGA_SERVICES = ['order', 'inventory', 'payment', 'fulfillment'] as const;
/** What a step does to a saga. */
export const STEP_OUTCOMES = ['progress', 'compensation', 'failure', 'terminal'] as const;
/** What a saga can be waiting for. */
export const SAGA_WAIT_STEPS = [
  'reservation',
  'payment',
  'stock-commit',
  'order-paid',
  'shipment',
  'order-cancel',
  'refund',
  'stock-release',
  'shipment-cancel',
] as const;
export type SagaWaitStep = (typeof SAGA_WAIT_STEPS)[number];
/** Why a saga counts as stuck. */
export const STUCK_REASONS = ['step-timeout', 'overall-timeout'] as const;

const Service = z.enum(SAGA_SERVICES);
const Outcome = z.enum(STEP_OUTCOMES);
const StuckReason = z.enum(STUCK_REASONS).nullable();

/** What a saga waits for, the service expected to act, and since when. */
export const WaitingView = z
  .object({
    step: z.enum(SAGA_WAIT_STEPS),
    service: Service,
    compensation: z.boolean(),
    since: Instant,
    waitedMs: z.number().int().min(0),
  })
  .meta({ id: 'WaitingView' });

/** `?stuck=&waitingFor=&limit=` of `GET /v1/sagas`. */
export const SagaListQuery = z.strictObject({
  stuck: z.enum(['true', 'false']).optional(),
  waitingFor: z.enum(SAGA_WAIT_STEPS).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** `GET /v1/sagas/{orderId}`: the saga's derived state and its timeline, oldest step first. */
export const SagaView = z
  .object({
    orderId: OrderId,
    tenantId: z.string().min(1),
    traceIds: z.array(z.string().regex(/^[0-9a-f]{32}$/)),
    state: z.object({
      status: z.enum(ORDER_STATUSES),
      terminal: z.boolean(),
      started: z.boolean(),
      complete: z.boolean(),
      missingCauses: z.number().int().min(0),
      startedAt: Instant,
      terminalAt: Instant.nullable(),
      durationMs: z.number().int().min(0).nullable(),
      compensated: z.boolean(),
      lastStep: z.object({
        eventId: z.uuid(),
        type: z.string(),
        service: Service,
        outcome: Outcome,
        occurredAt: Instant,
      }),
      waitingFor: WaitingView.nullable(),
      stuck: z.boolean(),
      stuckSince: Instant.nullable(),
      stuckReason: StuckReason,
      deadline: Instant.nullable().meta({ description: 'When the saga becomes stuck if nothing happens.' }),
      stepCount: z.number().int().min(1),
    }),
    timeline: z
      .array(
        z.object({
          index: z.number().int().min(0),
          eventId: z.uuid(),
          type: z.string(),
          service: Service,
          outcome: Outcome,
          compensation: z.boolean(),
          occurredAt: Instant,
          recordedAt: Instant,
          offsetMs: z.number().int().meta({ description: 'Milliseconds since the first step of the saga.' }),
          causationId: z.uuid().nullable(),
          causedBy: z.number().int().min(0).nullable(),
          traceId: z.string().nullable(),
          traceparent: z.string().nullable(),
          sequence: z.number().int().min(1),
          detail: z.string().nullable(),
        }),
      )
      .min(1),
  })
  .meta({ id: 'SagaView' });
export type SagaView = z.infer<typeof SagaView>;

/** `GET /v1/sagas`: the tenant's sagas (most recently stuck first with `stuck=true`). */
export const SagaListView = z
  .object({
    total: z.number().int().min(0),
    sagas: z.array(
      z.object({
        orderId: OrderId,
        status: z.enum(ORDER_STATUSES),
        terminal: z.boolean(),
        startedAt: Instant,
        lastStep: z.object({ type: z.string(), service: Service, outcome: Outcome, occurredAt: Instant }),
        waitingFor: WaitingView.nullable(),
        stuck: z.boolean(),
        stuckSince: Instant.nullable(),
        stuckReason: StuckReason,
      }),
    ),
  })
  .meta({ id: 'SagaListView' });
export type SagaListView = z.infer<typeof SagaListView>;

const Html = z.string().meta({ description: 'An HTML page (no data: its script calls the API with #key=).' });

/** The saga tracker's public API: saga timelines and stuck sagas for SREs, and the timeline page. */
export const SAGA_TRACKER_API: ServiceApi = {
  service: 'saga-tracker',
  title: 'checkout-saga saga tracker API',
  description:
    "Every saga's timeline and derived state, built from the saga topics, and the list of (stuck) sagas. Another tenant's saga answers 404. Errors as { error, message, ...details } (docs/api.md).",
  database: true,
  endpoints: [
    {
      method: 'get',
      path: '/v1/sagas',
      summary: "The tenant's sagas, e.g. `?stuck=true` (most recently stuck first) or `?waitingFor=payment`.",
      query: SagaListQuery,
      ok: { status: 200, description: 'The sagas.', schema: SagaListView },
      errors: ['VALIDATION_FAILED'],
    },
    {
      method: 'get',
      path: '/v1/sagas/{orderId}',
      summary: "A saga's timeline and derived state.",
      params: OrderIdParam,
      ok: { status: 200, description: 'The saga.', schema: SagaView },
      errors: ['VALIDATION_FAILED', 'SAGA_NOT_FOUND'],
    },
    {
      method: 'get',
      path: '/sagas',
      summary: 'The stuck-saga page for people on call.',
      auth: false,
      database: false,
      ok: { status: 200, description: 'The page.', schema: Html, mediaType: 'text/html' },
      errors: [],
    },
    {
      method: 'get',
      path: '/sagas/{orderId}',
      summary: 'The timeline page of one saga.',
      auth: false,
      database: false,
      params: OrderIdParam,
      ok: { status: 200, description: 'The page.', schema: Html, mediaType: 'text/html' },
      errors: ['VALIDATION_FAILED'],
    },
    {
      method: 'get',
      path: '/assets/saga-timeline.js',
      summary: "The pages' script.",
      auth: false,
      database: false,
      ok: { status: 200, description: 'The script.', schema: z.string(), mediaType: 'text/javascript' },
      errors: [],
    },
    {
      method: 'get',
      path: '/assets/saga-timeline.css',
      summary: "The pages' styles.",
      auth: false,
      database: false,
      ok: { status: 200, description: 'The styles.', schema: z.string(), mediaType: 'text/css' },
      errors: [],
    },
  ],
};
