// Tracing first: it instruments http and pg as they load.
import '@checkout/tracing/register';
import 'reflect-metadata';
import { runService } from '@checkout/service-kit';
import { loadPspSimulatorConfig } from './config/psp-simulator.config';
import { PspController } from './psp/http/psp.controller';
import { PspService } from './psp/psp.service';

// The PSP simulator: its own state in memory, no database of ours.
runService({
  name: 'psp-simulator',
  config: loadPspSimulatorConfig(),
  pspCredentials: true,
  controllers: [PspController],
  providers: [PspService],
});
