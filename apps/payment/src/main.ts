import 'reflect-metadata';
import { bootstrapService } from '@checkout/service-kit';
import { AppModule } from './app.module';
import { loadPaymentConfig } from './config/payment.config';

const config = loadPaymentConfig();
bootstrapService(AppModule.register(config), config).catch((error: unknown) => {
  console.error(JSON.stringify({ level: 'fatal', service: 'payment', msg: 'boot failed', err: String(error) }));
  process.exit(1);
});
