import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { stopTracing } from '@checkout/tracing';

/** Flushes the last spans when the service shuts down. */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await stopTracing();
  }
}
