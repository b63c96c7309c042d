import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import { NamedStatementClient } from './named-statements';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { DataSourceOptions } from 'typeorm';
import { ApiService } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { activeTraceFields, activeTraceparent } from '@checkout/tracing';
import { BaseConfig } from './config';
import { ConsumersOptions, consumerTransportProvider } from './consumers';
import { HealthController } from './health.controller';
import { KafkaHealthIndicator } from './kafka.health';
import { MetricsController } from './metrics.controller';
import { OPENAPI_SERVICE, OpenApiController } from './openapi.controller';
import { OutboxMonitorHost } from './outbox-monitor.host';
import { TracingShutdown } from './tracing.shutdown';
import { PspCredentialRegistry, TenantGuard, TenantRegistry } from './tenancy';
import { HAS_DATABASE, HAS_OUTBOX, METRICS_REGISTRY, OUTBOX_WRITER, SERVICE_CONFIG } from './tokens';
import { DatabaseWakeups } from './wakeups';

/** What a service tells the kit about itself. */
export interface ServiceKitOptions {
  config: BaseConfig;
  /** TypeORM entities and migrations of the service's own database; omit for a service without one. */
  database?: {
    entities: NonNullable<DataSourceOptions['entities']>;
    migrations: NonNullable<DataSourceOptions['migrations']>;
  };
  /**
   * The aggregate type written to outbox rows (e.g. `order`). Given, the service publishes through an outbox:
   * its relay gauges and outbox retention run too (a consumer's inbox retention runs either way).
   */
  aggregateType?: string;
  /**
   * Whether the service needs the tenants' PSP accounts and secrets (TENANT_PSP_CREDENTIALS): only payment and
   * the PSP simulator. The other services never read, hold or can log them.
   */
  pspCredentials?: boolean;
  /**
   * Given, the service consumes events: its `@EventPattern` methods run on the InboxTransport, connected by
   * bootstrapService (a hybrid app). Needs `database`.
   */
  consumers?: ConsumersOptions;
  /** Given, `GET /docs/openapi.json` answers this service's OpenAPI document (libs/contracts/src/http). */
  openApi?: ApiService;
}

/** Log fields pino replaces with [Redacted]: credentials never reach a log line. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers["psp-signature"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.secretKey',
  '*.webhookSecret',
  '*.authorization',
];

/** TypeORM options of a service database: migrations only, never synchronize. */
export function dataSourceOptions(
  url: string,
  database: NonNullable<ServiceKitOptions['database']>,
  config: Pick<BaseConfig, 'SERVICE_NAME' | 'DB_POOL_SIZE' | 'DB_PREPARED_STATEMENTS'>,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: database.entities,
    migrations: database.migrations,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    migrationsRun: false,
    extra: {
      max: config.DB_POOL_SIZE,
      // A connection idle for a minute is closed (pg's default is 10 s): each new one costs a SCRAM login on both
      // sides, and a periodic job that runs every few seconds would otherwise open one again and again.
      idleTimeoutMillis: 60_000,
      application_name: config.SERVICE_NAME,
      ...(config.DB_PREPARED_STATEMENTS === 'false' ? {} : { Client: NamedStatementClient }),
    },
  };
}

/** Logging, health, metrics, the database, the outbox writer and the consumer transport, in one import. */
@Global()
@Module({})
export class ServiceKitModule {
  static forRoot(options: ServiceKitOptions): DynamicModule {
    const registry = new Registry();
    registry.setDefaultLabels({ service: options.config.SERVICE_NAME });
    // The event-loop delay histogram samples on a timer, which wakes an idle service at that rate: prom-client's
    // 10 ms default was half of a service's CPU at rest, and 50 ms still cost 1.6 ms a second (a bare process,
    // perf stat). At 200 ms a 15 s scrape still sees ~75 samples, and a blocked loop delays the sample it overlaps
    // by the whole block, so its p99 is still the long stalls. Node records each whole interval between samples, so
    // the nodejs_eventloop_lag_* percentiles read 0.2 s more than the delay (docs/runbook.md; bench:saga subtracts it).
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 200 });
    const providers: Provider[] = [
      { provide: SERVICE_CONFIG, useValue: options.config },
      { provide: METRICS_REGISTRY, useValue: registry },
      { provide: HAS_DATABASE, useValue: options.database !== undefined },
      { provide: HAS_OUTBOX, useValue: options.aggregateType !== undefined },
      {
        provide: OUTBOX_WRITER,
        useValue: new OutboxWriter(options.aggregateType ?? options.config.SERVICE_NAME, activeTraceparent),
      },
      { provide: TenantRegistry, useValue: TenantRegistry.fromEnv(options.config) },
      TenantGuard,
      ...(options.pspCredentials
        ? [{ provide: PspCredentialRegistry, useValue: PspCredentialRegistry.fromEnv(options.config) }]
        : []),
      KafkaHealthIndicator,
      TracingShutdown,
    ];
    const imports: DynamicModule['imports'] = [
      TerminusModule,
      LoggerModule.forRoot({
        pinoHttp: [
          {
            level: options.config.LOG_LEVEL,
            base: { service: options.config.SERVICE_NAME },
            // Every line written in a span names its trace: a handler's line next to the request's access line
            // (access-log.ts), a consumer's next to the event's spans.
            mixin: activeTraceFields,
            redact: REDACTED_LOG_PATHS,
          },
          // Lines written while a write is in flight go out together in the next one (one syscall per request was
          // a tenth of a refused checkout's CPU); pino flushes what is buffered when the process exits.
          pino.destination({ dest: 1, sync: false }),
        ],
        // No per-request middleware: the access line is a fastify hook (access-log.ts), written to this logger.
        forRoutes: [],
      }),
    ];
    if (options.database) {
      const url = options.config.DATABASE_URL;
      if (!url) throw new Error('DATABASE_URL is required');
      imports.push(TypeOrmModule.forRoot(dataSourceOptions(url, options.database, options.config)));
      if (options.aggregateType || options.consumers) providers.push(OutboxMonitorHost);
      providers.push(DatabaseWakeups);
    } else if (options.consumers) throw new Error('consumers need the service database (inbox)');
    providers.push(consumerTransportProvider(options.consumers));
    const controllers: NonNullable<DynamicModule['controllers']> = [HealthController, MetricsController];
    if (options.openApi) {
      providers.push({ provide: OPENAPI_SERVICE, useValue: options.openApi });
      controllers.push(OpenApiController);
    }
    return {
      module: ServiceKitModule,
      imports,
      controllers,
      providers,
      exports: [
        SERVICE_CONFIG,
        METRICS_REGISTRY,
        OUTBOX_WRITER,
        TenantRegistry,
        TenantGuard,
        ...(options.pspCredentials ? [PspCredentialRegistry] : []),
        ...(options.database ? [DatabaseWakeups] : []),
      ],
    };
  }
}
