import { DynamicModule, Module } from '@nestjs/common';
import { ServiceKitModule } from '@checkout/service-kit';
import { PspSimulatorConfig } from './config/psp-simulator.config';
import { PspController } from './psp/http/psp.controller';
import { PspService } from './psp/psp.service';

/** The PSP simulator: its own state in memory, no database of ours. */
@Module({})
export class AppModule {
  static register(config: PspSimulatorConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [ServiceKitModule.forRoot({ config, pspCredentials: true })],
      controllers: [PspController],
      providers: [PspService],
    };
  }
}
