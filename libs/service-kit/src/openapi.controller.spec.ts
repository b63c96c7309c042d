import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Controller, Get, Module, Param, Post, Put } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { OPENAPI_PATH, openApiDocument } from '@checkout/contracts';
import { BaseConfigSchema } from './config';
import { RunningService, createService, listenService } from './bootstrap';
import { OPENAPI_SERVICE, OpenApiController, routesOf } from './openapi.controller';

@Module({
  imports: [LoggerModule.forRoot({ pinoHttp: { level: 'silent' }, forRoutes: [] })],
  controllers: [OpenApiController],
  providers: [{ provide: OPENAPI_SERVICE, useValue: 'inventory' }],
})
class DocsModule {}

const config = BaseConfigSchema.parse({
  SERVICE_NAME: 'openapi-spec',
  PORT: '1',
  LOG_LEVEL: 'silent',
  KAFKA_BROKERS: 'unused:9092',
});

describe('GET /docs/openapi.json', () => {
  let running: RunningService;
  const get = (port: number) => fetch(`http://127.0.0.1:${port}${OPENAPI_PATH}`);

  beforeAll(async () => {
    running = await listenService(
      await createService(DocsModule, config),
      { api: 0, internal: 0 },
      '127.0.0.1',
    );
  });
  afterAll(() => running.close());

  it("answers the service's OpenAPI document on the public port, without a key", async () => {
    const res = await get(running.apiPort);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(openApiDocument('inventory'))));
  });

  it('is not served on the internal port', async () => {
    const res = await get(running.internalPort);
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: string }).error, 'NOT_FOUND');
  });
});

@Controller('v1/things')
class ThingsController {
  @Get(':thingId')
  one(@Param('thingId') id: string) {
    return id;
  }

  @Put()
  put() {}

  helper() {}
}

@Controller()
class RootController {
  @Post('a/b/')
  post() {}
}

describe('routesOf', () => {
  it('lists method and OpenAPI path of every route handler, sorted', () => {
    assert.deepEqual(routesOf([ThingsController, RootController]), [
      'get /v1/things/{thingId}',
      'post /a/b',
      'put /v1/things',
    ]);
  });
});
