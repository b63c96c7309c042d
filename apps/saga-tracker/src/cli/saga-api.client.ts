import { z } from 'zod';
import { ORDER_STATUSES, SAGA_SERVICES, STEP_OUTCOMES, WAIT_STEPS, WaitStep } from '../saga/domain';

const Service = z.enum(SAGA_SERVICES);
const Outcome = z.enum(STEP_OUTCOMES);
const Instant = z.iso.datetime({ offset: true });
const Waiting = z.object({
  step: z.enum(Object.keys(WAIT_STEPS) as [WaitStep, ...WaitStep[]]),
  service: Service,
  compensation: z.boolean(),
  since: Instant,
  waitedMs: z.number().int().min(0),
});
const StuckReason = z.enum(['step-timeout', 'overall-timeout']).nullable();

/** GET /v1/sagas/{orderId} as the API promises it (the CLI and the specs check every answer against it). */
export const SagaViewSchema = z.object({
  orderId: z.uuid(),
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
    waitingFor: Waiting.nullable(),
    stuck: z.boolean(),
    stuckSince: Instant.nullable(),
    stuckReason: StuckReason,
    deadline: Instant.nullable(),
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
        offsetMs: z.number().int(),
        causationId: z.uuid().nullable(),
        causedBy: z.number().int().min(0).nullable(),
        traceId: z.string().nullable(),
        traceparent: z.string().nullable(),
        sequence: z.number().int().min(1),
        detail: z.string().nullable(),
      }),
    )
    .min(1),
});
export type SagaViewBody = z.infer<typeof SagaViewSchema>;

/** GET /v1/sagas[?stuck=true]. */
export const SagaListSchema = z.object({
  total: z.number().int().min(0),
  sagas: z.array(
    z.object({
      orderId: z.uuid(),
      status: z.enum(ORDER_STATUSES),
      terminal: z.boolean(),
      startedAt: Instant,
      lastStep: z.object({ type: z.string(), service: Service, outcome: Outcome, occurredAt: Instant }),
      waitingFor: Waiting.nullable(),
      stuck: z.boolean(),
      stuckSince: Instant.nullable(),
      stuckReason: StuckReason,
    }),
  ),
});
export type SagaListBody = z.infer<typeof SagaListSchema>;

/** Why a call to the tracker did not give an answer, in words for the person at the terminal. */
export class TrackerError extends Error {}

/** A small client of the tracker's HTTP API with one tenant key; every answer is validated. */
export class SagaApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs = 5_000,
  ) {}

  /** The saga of an order; TrackerError when it is unknown to this tenant, or the tracker is away. */
  async saga(orderId: string): Promise<SagaViewBody> {
    return this.get(
      `/v1/sagas/${encodeURIComponent(orderId)}`,
      SagaViewSchema,
      () =>
        `no saga for order ${orderId} in this tenant: unknown order id, another tenant's order, or its events have not reached the tracker yet`,
    );
  }

  /** The stuck sagas of the tenant, most recently stuck first. */
  async stuck(limit = 100): Promise<SagaListBody> {
    return this.get(`/v1/sagas?stuck=true&limit=${limit}`, SagaListSchema, () => 'not found');
  }

  private async get<S extends z.ZodType>(
    path: string,
    schema: S,
    notFound: () => string,
  ): Promise<z.infer<S>> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${this.apiKey}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new TrackerError(
        `the saga tracker does not answer at ${this.baseUrl} (${cause}); is it running? ` +
          `(node infra/local/dist/src/cli.js start saga-tracker, or set SAGA_TRACKER_URL)`,
      );
    }
    const body: unknown = await res.json().catch(() => null);
    if (res.status === 404) throw new TrackerError(notFound());
    if (res.status === 401) throw new TrackerError('the API key was refused (set SAGA_TRACKER_API_KEY)');
    if (!res.ok) {
      const message = (body as { message?: string } | null)?.message ?? `HTTP ${res.status}`;
      throw new TrackerError(`the tracker answered ${res.status}: ${message}`);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success)
      throw new TrackerError(`the tracker answered something unexpected: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  }
}
