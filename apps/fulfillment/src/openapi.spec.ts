import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { contractRoutes } from '@checkout/contracts';
import { routesOf } from '@checkout/service-kit';
import { NotificationsController } from './notifications/http/notifications.controller';
import { ShipmentsController } from './shipping/http/shipments.controller';

describe('fulfillment: the HTTP contract (libs/contracts/src/http, docs/openapi/fulfillment.json)', () => {
  it('lists exactly the routes the public controllers serve', () => {
    assert.deepEqual(routesOf([ShipmentsController, NotificationsController]), contractRoutes('fulfillment'));
  });
});
