import { Module } from '@nestjs/common';
import {
  CancelOrderStockHandler,
  CommitStockHandler,
  ExpireReservationsHandler,
  ReleaseStockHandler,
  RepairDriftHandler,
  ReserveStockHandler,
  ReturnSoldStockHandler,
  SetStockHandler,
} from './commands';
import { ReservationConsumer } from './consumers/reservation.consumer';
import { StockController } from './http/stock.controller';
import { GateResyncJob } from './jobs/gate-resync.job';
import { ReservationJob } from './jobs/reservation.job';
import { ReservationExpiryAlarm } from './expiry-alarm';
import { ReservationMetrics } from './reservation.metrics';

/** Stock, reservations and their lifecycle: commands, consumers, jobs and the HTTP API. */
@Module({
  // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
  controllers: [StockController, ReservationConsumer],
  providers: [
    ReserveStockHandler,
    ReleaseStockHandler,
    ExpireReservationsHandler,
    CommitStockHandler,
    ReturnSoldStockHandler,
    CancelOrderStockHandler,
    SetStockHandler,
    RepairDriftHandler,
    ReservationMetrics,
    ReservationExpiryAlarm,
    ReservationJob,
    GateResyncJob,
  ],
})
export class ReservationModule {}
