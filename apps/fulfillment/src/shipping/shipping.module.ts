import { Module } from '@nestjs/common';
import { NotificationsModule } from '../notifications/notifications.module';
import { CancelShipmentHandler, CreateShipmentHandler } from './commands';
import { ShippingConsumer } from './consumers/shipping.consumer';
import { ShipmentsController } from './http/shipments.controller';
import { ShippingMetrics } from './shipping.metrics';

/** Shipments: booked when the order is paid, called back when it is refunded, and the shipments API. */
@Module({
  imports: [NotificationsModule],
  // Consumers are controllers: Nest looks for @EventPattern methods there (and only there).
  controllers: [ShipmentsController, ShippingConsumer],
  providers: [CreateShipmentHandler, CancelShipmentHandler, ShippingMetrics],
})
export class ShippingModule {}
