import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { METRICS_REGISTRY, OUTBOX_WRITER, TenantRegistry } from '@checkout/service-kit';
import { InventoryConfig } from '../config/inventory.config';
import {
  CommitStock,
  ExpireReservations,
  ReleaseStock,
  RepairDrift,
  ReserveStockBatch,
  ReturnSoldStock,
  SetStock,
} from './commands';
import { ReservationConsumer } from './consumers/reservation.consumer';
import { StockController } from './http/stock.controller';
import { INVENTORY_CONFIG } from './inventory.tokens';
import { InventoryMetrics } from './jobs/inventory.metrics';
import { GateResyncJob } from './jobs/gate-resync.job';
import { ReservationOutcomes } from './metrics/reservation-outcomes';
import { ReservationJobs } from './jobs/reservation.jobs';

/** Stock, reservations and their lifecycle: commands, consumers, jobs and the HTTP API. */
@Module({})
export class ReservationModule {
  static register(config: InventoryConfig): DynamicModule {
    return {
      module: ReservationModule,
      // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
      controllers: [StockController, ReservationConsumer],
      providers: [
        { provide: INVENTORY_CONFIG, useValue: config },
        {
          provide: ReserveStockBatch,
          useFactory: (outbox: OutboxWriter) =>
            new ReserveStockBatch(outbox, { ttlSeconds: config.INVENTORY_RESERVATION_TTL_SECONDS }),
          inject: [OUTBOX_WRITER],
        },
        {
          provide: ReleaseStock,
          useFactory: (outbox: OutboxWriter) => new ReleaseStock(outbox),
          inject: [OUTBOX_WRITER],
        },
        {
          provide: ExpireReservations,
          useFactory: (outbox: OutboxWriter) => new ExpireReservations(outbox),
          inject: [OUTBOX_WRITER],
        },
        {
          provide: CommitStock,
          useFactory: (outbox: OutboxWriter) => new CommitStock(outbox),
          inject: [OUTBOX_WRITER],
        },
        { provide: ReturnSoldStock, useValue: new ReturnSoldStock() },
        {
          provide: SetStock,
          useFactory: (outbox: OutboxWriter) => new SetStock(outbox),
          inject: [OUTBOX_WRITER],
        },
        { provide: RepairDrift, useValue: new RepairDrift() },
        {
          provide: InventoryMetrics,
          useFactory: (registry: Registry, ds: DataSource, tenants: TenantRegistry) =>
            new InventoryMetrics(registry, ds, tenants),
          inject: [METRICS_REGISTRY, DataSource, TenantRegistry],
        },
        {
          provide: ReservationOutcomes,
          useFactory: (registry: Registry, ds: DataSource) => new ReservationOutcomes(registry).attach(ds),
          inject: [METRICS_REGISTRY, DataSource],
        },
        ReservationJobs,
        GateResyncJob,
      ],
    };
  }
}
