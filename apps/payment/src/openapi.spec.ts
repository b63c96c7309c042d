import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { contractRoutes } from '@checkout/contracts';
import { routesOf } from '@checkout/service-kit';
import { PaymentsController } from './payment/http/payments.controller';
import { WebhooksController } from './payment/http/webhooks.controller';

describe('payment: the HTTP contract (libs/contracts/src/http, docs/openapi/payment.json)', () => {
  it('lists exactly the routes the public controllers serve', () => {
    assert.deepEqual(routesOf([PaymentsController, WebhooksController]), contractRoutes('payment'));
  });
});
