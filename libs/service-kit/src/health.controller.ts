import { Controller, Get, Inject } from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorFunction,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { KafkaHealthIndicator } from './kafka.health';
import { HAS_DATABASE } from './tokens';

/** Liveness (the process answers) and readiness (its database and Kafka answer). */
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
    const checks: HealthIndicatorFunction[] = [() => this.kafka.check('kafka')];
    if (this.hasDatabase) checks.unshift(() => this.db.pingCheck('database', { timeout: 1000 }));
    return this.health.check(checks);
  }
}
