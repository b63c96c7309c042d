import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { GateUnavailable } from '@checkout/stock-gate';
import { OrderStockGate } from '../../../gate/stock-gate.provider';
import { AnsweredFilter, CatalogRepository } from '../../database/catalog.repository';

/** Order lines (a SKU's) or Idempotency-Keys (those completed since a time) read from the database per page. */
const PAGE = 1_000;

/**
 * MarkAnsweredCheckouts: tells the gate which checkouts have an answer to replay, read from the database, where
 * the gate may not know them: a SKU's before its gate goes on (or back on after Redis lost it), and those this
 * process answered while Redis was away (docs/design/order-checkout.md, "Refused without the database").
 */
@Injectable()
export class MarkAnsweredCheckoutsHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly catalog: CatalogRepository,
    private readonly gate: OrderStockGate,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('MarkAnsweredCheckouts');
  }

  /** Marks the tenant's answered checkouts that `filter` selects; how many, or GateUnavailable. */
  async execute(tenantId: string, filter: AnsweredFilter): Promise<number | GateUnavailable> {
    let marked = 0;
    let after: string | null = null;
    do {
      const page = await this.catalog.answeredCheckouts(this.dataSource, tenantId, filter, after, PAGE);
      if (page.answered.length > 0) {
        const r = await this.gate.markAnsweredCheckouts(tenantId, page.answered);
        if (r.outcome === 'GateUnavailable') return r;
        marked += page.answered.length;
      }
      after = page.after;
    } while (after !== null);
    return marked;
  }

  /** Marks, for every tenant, the checkouts answered while Redis was away; false while it still is. */
  async markUnmarked(tenantIds: string[]): Promise<boolean> {
    const unmarked = this.gate.unmarkedCheckouts();
    if (!unmarked) return true;
    let marked = 0;
    for (const tenantId of tenantIds) {
      const r = await this.execute(tenantId, { completedSince: unmarked.since });
      if (typeof r !== 'number') return false;
      marked += r;
    }
    this.gate.forgetUnmarked(unmarked);
    this.logger.info(
      { since: unmarked.since, failures: unmarked.failures, marked },
      'checkouts answered while the gate was away are marked',
    );
    return true;
  }
}
