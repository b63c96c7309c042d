import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { contractRoutes } from '@checkout/contracts';
import { routesOf } from '@checkout/service-kit';
import { SagasController } from './saga/http/sagas.controller';
import { TimelinePageController } from './saga/http/timeline-page.controller';

describe('saga-tracker: the HTTP contract (libs/contracts/src/http, docs/openapi/saga-tracker.json)', () => {
  it('lists exactly the routes the public controllers serve', () => {
    assert.deepEqual(routesOf([SagasController, TimelinePageController]), contractRoutes('saga-tracker'));
  });
});
