import { migrateMain } from '@checkout/service-kit';
import { DATABASE } from './database';
import { loadPaymentConfig } from './config/payment.config';

/** Applies pending migrations of the payment database (a Kubernetes Job runs the same file). */
void migrateMain('payment', loadPaymentConfig, DATABASE);
