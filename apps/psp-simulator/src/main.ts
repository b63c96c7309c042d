import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { BaseConfigSchema, ServiceKitModule, bootstrapService, parseConfig } from '@checkout/service-kit';

const config = parseConfig(BaseConfigSchema);

/** The PSP simulator: its own state, no database of ours. */
@Module({ imports: [ServiceKitModule.forRoot({ config })] })
class PspSimulatorModule {}

bootstrapService(PspSimulatorModule, config).catch((error: unknown) => {
  console.error(
    JSON.stringify({ level: 'fatal', service: 'psp-simulator', msg: 'boot failed', err: String(error) }),
  );
  process.exit(1);
});
