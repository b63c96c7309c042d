import { Body, Controller, Delete, Get, Headers, HttpCode, Post, Put, Query, Res } from '@nestjs/common';
import { Response } from 'express';
import { z } from 'zod';
import { ApiError, validate } from '@checkout/service-kit';
import { Fault, InjectedFailure, PspService } from '../psp.service';
import { PspRequestError } from '../psp.store';

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
  })
  .partial();
const FaultBody = z.object({
  reference: z.string().min(1).max(128),
  operation: z.enum(['charge', 'refund']),
  status: z.number().int().min(500).max(599).default(503),
  times: z.number().int().min(1).max(1000).default(1),
});

/** Maps the PSP's own failures to its answers; anything else is rethrown. */
function answerFailure(error: unknown): never {
  if (error instanceof PspRequestError) throw new ApiError(error.status, error.code, error.message);
  if (error instanceof InjectedFailure)
    throw new ApiError(error.status, 'PSP_UNAVAILABLE', 'the PSP had a problem');
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
      throw new ApiError(401, 'UNAUTHENTICATED', 'Authorization: Bearer <account secret key> is required');
    return account;
  }

  @Post('charges')
  async createCharge(
    @Headers('authorization') authorization: string | undefined,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ) {
    const account = this.account(authorization);
    const idempotencyKey = validate(IdempotencyKey, key, 'Idempotency-Key header');
    const input = validate(ChargeBody, body);
    try {
      const { charge, replayed } = await this.psp.charge(account, idempotencyKey, input);
      res.status(replayed ? 200 : 201);
      if (replayed) res.setHeader('Idempotent-Replayed', 'true');
      return charge;
    } catch (error) {
      answerFailure(error);
    }
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
  async createRefund(
    @Headers('authorization') authorization: string | undefined,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ) {
    const account = this.account(authorization);
    const idempotencyKey = validate(IdempotencyKey, key, 'Idempotency-Key header');
    const input = validate(RefundBody, body);
    try {
      const { refund, replayed } = await this.psp.refund(account, idempotencyKey, input);
      res.status(replayed ? 200 : 201);
      if (replayed) res.setHeader('Idempotent-Replayed', 'true');
      return refund;
    } catch (error) {
      answerFailure(error);
    }
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
    const fault: Fault = validate(FaultBody, body);
    this.psp.addFault(fault);
    return fault;
  }

  @Delete('_admin/faults')
  clearFaults(@Query('reference') reference: string | undefined) {
    return { removed: this.psp.clearFaults(validate(z.string().min(1), reference, 'reference')) };
  }
}
