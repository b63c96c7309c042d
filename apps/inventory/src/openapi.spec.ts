import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { contractRoutes } from '@checkout/contracts';
import { routesOf } from '@checkout/service-kit';
import { StockController } from './reservation/http/stock.controller';

describe('inventory: the HTTP contract (libs/contracts/src/http, docs/openapi/inventory.json)', () => {
  it('lists exactly the routes the public controllers serve', () => {
    assert.deepEqual(routesOf([StockController]), contractRoutes('inventory'));
  });
});
