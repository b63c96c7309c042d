import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Counter, Registry } from 'prom-client';
import { GateUnavailable, StockGate } from '@checkout/stock-gate';
import { METRICS_REGISTRY, SERVICE_CONFIG } from '@checkout/service-kit';
import { OrderConfig } from '../config/order.config';

/**
 * The flash-sale gate as this service uses it: one fail-fast Redis connection, and a warning plus a metric
 * every time Redis could not be asked and a checkout fell back to the database path.
 */
@Injectable()
export class OrderStockGate implements OnModuleInit, OnApplicationShutdown {
  readonly gate: StockGate;
  private readonly unavailable: Counter<'operation'>;

  constructor(
    @Inject(SERVICE_CONFIG) config: OrderConfig,
    @Inject(METRICS_REGISTRY) registry: Registry,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('StockGate');
    this.gate = StockGate.connect(config.REDIS_URL);
    this.unavailable = new Counter({
      name: 'order_stock_gate_unavailable_total',
      help: 'Gate calls that found Redis unavailable (checkout fell back to the database path)',
      labelNames: ['operation'],
      registers: [registry],
    });
  }

  async onModuleInit(): Promise<void> {
    if (!(await this.gate.ready(3_000)))
      this.logger.warn('stock gate Redis not reachable at boot: checkouts use the database path until it is');
  }

  /** Counts and logs a GateUnavailable result. */
  reportUnavailable(operation: string, result: GateUnavailable, context: Record<string, unknown> = {}): void {
    this.unavailable.inc({ operation });
    this.logger.warn(
      { operation, reason: result.reason, ...context },
      'stock gate unavailable: falling back to the database path',
    );
  }

  /** Compensation of the checkout's take: returns the hold's units; Redis down is reported, not thrown. */
  async giveBack(tenantId: string, holdId: string | null, why: string): Promise<void> {
    if (!holdId) return;
    const r = await this.gate.giveBack(tenantId, holdId);
    if (r.outcome === 'GateUnavailable') this.reportUnavailable('give-back', r, { tenantId, holdId, why });
  }

  /** The order was paid: the hold's units are sold for good. */
  async settle(tenantId: string, holdId: string | null): Promise<void> {
    if (!holdId) return;
    const r = await this.gate.settle(tenantId, holdId);
    if (r.outcome === 'GateUnavailable') this.reportUnavailable('settle', r, { tenantId, holdId });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.gate.close();
  }
}
