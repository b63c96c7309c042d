import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { contractRoutes } from '@checkout/contracts';
import { routesOf } from '@checkout/service-kit';
import { AdminController } from './catalog/http/admin.controller';
import { CheckoutController } from './checkout/http/checkout.controller';
import { OrdersController } from './orders/http/orders.controller';

describe('order: the HTTP contract (libs/contracts/src/http, docs/openapi/order.json)', () => {
  it('lists exactly the routes the public controllers serve', () => {
    assert.deepEqual(
      routesOf([CheckoutController, OrdersController, AdminController]),
      contractRoutes('order'),
    );
  });
});
