import { z } from 'zod';
import { SagaListView, SagaView } from '@checkout/contracts';

/** GET /v1/sagas/{orderId} as the API promises it (libs/contracts): the CLI and the specs check every answer. */
export const SagaViewSchema = SagaView;
export type SagaViewBody = SagaView;

/** GET /v1/sagas[?stuck=true] as the API promises it (libs/contracts). */
export const SagaListSchema = SagaListView;
export type SagaListBody = SagaListView;

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
