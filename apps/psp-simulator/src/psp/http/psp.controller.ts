import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  HttpException,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { DomainError } from '@checkout/contracts';
import { validate } from '@checkout/service-kit';
import { Fault, FaultTarget, InjectedFailure, LostResponse, PspService } from '../psp.service';
import { Idempotent } from '../psp.store';

const IdempotencyKey = z.string().min(1).max(255);
const ChargeBody = z.object({
  amount: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[A-Z]{3}$/),
  token: z.string().min(1).max(128),
  reference: z.string().min(1).max(128),
  metadata: z.record(z.string(), z.string().max(500)).default({}),
});
const RefundBody = z.object({
  charge: z.string().min(1).max(128),
  amount: z.number().int().min(1).optional(),
  reason: z.string().max(255).nullable().optional(),
});
const ChargeQuery = z.object({
  reference: z.string().min(1).max(128).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
const KnobsBody = z
  .object({
    latencyMs: z.number().int().min(0).max(120_000),
    jitterMs: z.number().int().min(0).max(120_000),
    errorRate: z.number().min(0).max(1),
    errorMode: z.enum(['before', 'after']),
    hangRate: z.number().min(0).max(1),
    lostResponseRate: z.number().min(0).max(1),
    webhookCopies: z.number().int().min(1).max(10),
    webhookShuffleMs: z.number().int().min(0).max(60_000),
    badSignatureRate: z.number().min(0).max(1),
    staleTimestampRate: z.number().min(0).max(1),
  })
  .partial()
  .refine(
    (k) => (k.badSignatureRate ?? 0) + (k.staleTimestampRate ?? 0) <= 1,
    'badSignatureRate + staleTimestampRate must be at most 1',
  );
const FaultBody = z
  .object({
    reference: z.string().min(1).max(128).optional(),
    /** Every request of that amount (the caller does not know the reference yet). */
    amount: z.number().int().positive().max(1e15).optional(),
    operation: z.enum(['charge', 'refund']),
    /** The answer of a failing request; null: the request does not fail, it is only delayed. */
    status: z.number().int().min(500).max(599).nullable().default(503),
    mode: z.enum(['before', 'after']).default('before'),
    delayMs: z.number().int().min(0).max(120_000).default(0),
    times: z.number().int().min(1).max(100_000).default(1),
  })
  .refine((f) => (f.reference === undefined) !== (f.amount === undefined), 'give either reference or amount');

const FaultTargetQuery = z.union([
  z.object({ reference: z.string().min(1), amount: z.undefined() }),
  z.object({ amount: z.coerce.number().int().positive(), reference: z.undefined() }),
]);

/** Maps the simulator's own failures (a lost answer, an injected fault) to their answers; anything else is rethrown. */
function answerFailure(error: unknown, res: FastifyReply): never {
  if (error instanceof LostResponse) {
    // The work is done; the caller never hears of it, as when a connection drops mid-answer.
    res.raw.socket?.destroy();
    throw new HttpException({ error: 'PSP_ANSWER_LOST', message: 'the answer was lost' }, 502);
  }
  if (error instanceof InjectedFailure)
    throw new HttpException({ error: 'PSP_UNAVAILABLE', message: 'the PSP had a problem' }, error.status);
  throw error;
}

/** The merchant API: charges, refunds and lookups, authenticated by the account's secret key. */
@Controller('v1')
export class PspController {
  constructor(private readonly psp: PspService) {}

  private account(authorization: string | undefined): string {
    const key = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
    const account = this.psp.accountOf(key);
    if (!account)
      throw new DomainError('UNAUTHENTICATED', 'Authorization: Bearer <account secret key> is required');
    return account;
  }

  /**
   * The Idempotency-Key contract of every POST: the account, the key and the body are checked, then the first
   * request with a key answers 201, a replay of it 200 with `Idempotent-Replayed: true`.
   */
  private async idempotent<S extends z.ZodType, T>(
    request: { authorization: string | undefined; key: string | undefined; body: unknown; res: FastifyReply },
    schema: S,
    run: (account: string, key: string, input: z.infer<S>) => Promise<Idempotent<T>>,
  ): Promise<T> {
    const account = this.account(request.authorization);
    const key = validate(IdempotencyKey, request.key, 'Idempotency-Key header');
    const input = validate(schema, request.body);
    try {
      const { object, replayed } = await run(account, key, input);
      void request.res.code(replayed ? 200 : 201);
      if (replayed) void request.res.header('Idempotent-Replayed', 'true');
      return object;
    } catch (error) {
      answerFailure(error, request.res);
    }
  }

  @Post('charges')
  createCharge(
    @Headers('authorization') authorization: string | undefined,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    return this.idempotent({ authorization, key, body, res }, ChargeBody, (account, k, input) =>
      this.psp.charge(account, k, input),
    );
  }

  @Get('charges')
  listCharges(@Headers('authorization') authorization: string | undefined, @Query() query: unknown) {
    const account = this.account(authorization);
    const q = validate(ChargeQuery, query, 'query');
    const data = this.psp.store.listCharges(account, {
      reference: q.reference,
      from: q.from ? new Date(q.from) : undefined,
      to: q.to ? new Date(q.to) : undefined,
      limit: q.limit,
    });
    return { data };
  }

  @Post('refunds')
  createRefund(
    @Headers('authorization') authorization: string | undefined,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    return this.idempotent({ authorization, key, body, res }, RefundBody, (account, k, input) =>
      this.psp.refund(account, k, input),
    );
  }

  /** Test ledger: every charge, refund, webhook event and delivery of one reference. */
  @Get('_ledger')
  ledger(@Query('reference') reference: string | undefined) {
    return this.psp.store.ledger(validate(z.string().min(1).max(128), reference, 'reference'));
  }

  @Get('_admin/knobs')
  knobs() {
    return this.psp.knobs;
  }

  @Put('_admin/knobs')
  setKnobs(@Body() body: unknown) {
    Object.assign(this.psp.knobs, validate(KnobsBody, body));
    return this.psp.knobs;
  }

  @Post('_admin/faults')
  @HttpCode(201)
  addFault(@Body() body: unknown) {
    const fault = validate(FaultBody, body) as Fault;
    this.psp.addFault(fault);
    return fault;
  }

  @Delete('_admin/faults')
  clearFaults(
    @Query('reference') reference: string | undefined,
    @Query('amount') amount: string | undefined,
  ) {
    const target = validate(FaultTargetQuery, { reference, amount }, 'reference or amount') as FaultTarget;
    return { removed: this.psp.clearFaults(target) };
  }
}
