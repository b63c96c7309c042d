import { Controller, Get, Inject } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorFunction,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { KafkaHealthIndicator } from './kafka.health';
import { HAS_DATABASE } from './tokens';

/**
 * Liveness (the process answers) and readiness: ready when its database answers, which is all its HTTP
 * endpoints need (a checkout writes the order and its outbox row; Debezium relays it later). Kafka and the
 * consumers are reported in detail but never fail readiness: a Kafka outage delays the sagas, it must not take
 * the API out of the load balancer. Served on the internal port only.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly kafka: KafkaHealthIndicator,
    private readonly db: TypeOrmHealthIndicator,
    @Inject(HAS_DATABASE) private readonly hasDatabase: boolean,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    const checks: HealthIndicatorFunction[] = [() => this.kafka.report('kafka')];
    if (this.hasDatabase) checks.unshift(() => this.db.pingCheck('database', { timeout: 1000 }));
    return this.health.check(checks);
  }
}
