import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OrderId, SagaListQuery } from '@checkout/contracts';
import { CurrentTenant, Tenant, TenantGuard, validate } from '@checkout/service-kit';
import { SagaNotFound, StuckTimeouts } from '../domain';
import { findSaga, listSagas, stepsOf } from '../database/saga.repository';
import { STUCK_TIMEOUTS } from '../saga.tokens';
import { SagaSummaryView, SagaView, sagaSummary, sagaView } from './saga.views';

/**
 * The saga API for SREs: a saga's timeline and derived state, and the list of (stuck) sagas. Tenant-scoped by
 * the API key: another tenant's saga answers 404, like one the tracker has never seen.
 */
@Controller('v1/sagas')
@UseGuards(TenantGuard)
export class SagasController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(STUCK_TIMEOUTS) private readonly timeouts: StuckTimeouts,
  ) {}

  @Get()
  async list(
    @CurrentTenant() tenant: Tenant,
    @Query() query: unknown,
  ): Promise<{ total: number; sagas: SagaSummaryView[] }> {
    const q = validate(SagaListQuery, query, 'query');
    const { total, rows } = await listSagas(this.dataSource, tenant.id, {
      stuck: q.stuck === undefined ? undefined : q.stuck === 'true',
      waitingFor: q.waitingFor,
      limit: q.limit,
    });
    const now = new Date();
    return { total, sagas: rows.map((r) => sagaSummary(r, now)) };
  }

  @Get(':orderId')
  async get(@CurrentTenant() tenant: Tenant, @Param('orderId') orderId: string): Promise<SagaView> {
    const id = validate(OrderId, orderId, 'orderId');
    const row = await findSaga(this.dataSource, tenant.id, id);
    if (!row) throw new SagaNotFound(id);
    return sagaView(row, await stepsOf(this.dataSource, tenant.id, id), new Date(), this.timeouts);
  }
}
