import { ArgumentsHost, Catch, INestApplication, Provider, RpcExceptionFilter } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Registry } from 'prom-client';
import { Observable, throwError } from 'rxjs';
import { DataSource } from 'typeorm';
import { ServiceCode } from '@checkout/contracts';
import { InboxTransport, InboxTransportOptions } from '@checkout/messaging';
import { startEventSpans, withEventSpan } from '@checkout/tracing';
import { BaseConfig, kafkaClientOptions, messagingSettings } from './config';
import { shutdownOnFatal } from './consumer-lifecycle';
import { TenantRegistry } from './tenancy';
import { METRICS_REGISTRY, SERVICE_CONFIG } from './tokens';

/** What a service says about its consumers (ServiceKitModule.forRoot's `consumers`). */
export interface ConsumersOptions {
  /** Prefix of the admission codes its DLQ shows: `INVENTORY` -> `INVENTORY.UNKNOWN_TENANT`, `.SAGA_MISMATCH`. */
  codePrefix: ServiceCode;
  /** Events per transaction at most for `@EventPattern(type, { batch: true })` methods. */
  batchSize?: number;
  /** How the broker answers the consumers' fetches; default: at the first message. */
  fetch?: InboxTransportOptions['fetch'];
  /**
   * Every event's saga lock is taken with its inbox row: a handler's own lockSaga costs no round trip, and chunks
   * of different topics (group commit) lock their orders in one order, so they never deadlock.
   */
  sagaLocks?: boolean;
}

/** Injection token of the service's consumer transport (null for a service that consumes nothing). */
export const CONSUMER_TRANSPORT = Symbol('CONSUMER_TRANSPORT');

/** The provider of the service's InboxTransport, built from its config, database, registry, logger and tenants. */
export function consumerTransportProvider(options: ConsumersOptions | undefined): Provider {
  if (!options) return { provide: CONSUMER_TRANSPORT, useValue: null };
  return {
    provide: CONSUMER_TRANSPORT,
    useFactory: (
      config: BaseConfig,
      registry: Registry,
      logger: PinoLogger,
      dataSource: DataSource,
      tenants: TenantRegistry,
    ) => {
      logger.setContext('InboxTransport');
      return new InboxTransport({
        name: config.SERVICE_NAME,
        ...kafkaClientOptions(config),
        dataSource,
        registry,
        logger: logger.logger,
        admission: { tenants, codePrefix: options.codePrefix },
        batchSize: options.batchSize,
        fetch: options.fetch,
        sagaLocks: options.sagaLocks,
        around: (event, fn) => withEventSpan(event, config.SERVICE_NAME, fn),
        aroundChunk: (events) => startEventSpans(events, config.SERVICE_NAME),
        lagProbeIntervalMs: messagingSettings(config).probeIntervalMs,
        onFatal: shutdownOnFatal(logger, 'consumer'),
      });
    },
    inject: [SERVICE_CONFIG, METRICS_REGISTRY, PinoLogger, DataSource, TenantRegistry],
  };
}

/**
 * Hands a consumer method's error to the transport as it was thrown: Nest's default filter would replace it
 * with `{ status: 'error', message: 'Internal server error' }`, and the transport decides on the error itself
 * (a DomainError is parked with its code, an infrastructure error waits, any other is retried).
 */
@Catch()
export class KeepErrorForTransport implements RpcExceptionFilter {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}

/**
 * Makes the app hybrid when the service consumes events: the transport is connected as the app's microservice
 * (every `@EventPattern` method of the module's controllers is a handler). Call before the app initialises (the
 * filter must be registered first); start with `app.startAllMicroservices()` once it has, which returns at once
 * (the groups join in the background), so listen() and readiness never wait for Kafka.
 */
export function connectConsumers(app: INestApplication): boolean {
  const transport = app.get<InboxTransport | null>(CONSUMER_TRANSPORT, { strict: false });
  if (!transport) return false;
  const microservice = app.connectMicroservice(
    { strategy: transport },
    // Deferred: the listeners are registered at start, after the filter below (they read it when created).
    { inheritAppConfig: false, deferInitialization: true },
  );
  microservice.useGlobalFilters(new KeepErrorForTransport());
  return true;
}
