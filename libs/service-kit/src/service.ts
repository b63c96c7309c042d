import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { ApiService, SERVICE_APIS } from '@checkout/contracts';
import { BootstrapOptions, bootstrapService } from './bootstrap';
import { ServiceKitModule, ServiceKitOptions } from './service-kit.module';

/** A service as its main.ts describes it: the kit's options, named after the service, and its own modules. */
export interface ServiceDefinition extends Omit<ServiceKitOptions, 'openApi' | 'aggregateType'> {
  /** Its public API's name (its OpenAPI document) and, when it publishes, its outbox rows' aggregate type. */
  name: ApiService | 'psp-simulator';
  /** Whether it publishes events through an outbox. */
  publishes?: boolean;
  /** Its area modules. */
  areas?: NonNullable<ModuleMetadata['imports']>;
  /** Controllers and providers of a service too small for areas (the PSP simulator). */
  controllers?: ModuleMetadata['controllers'];
  providers?: ModuleMetadata['providers'];
  /** How its HTTP layer differs from the kit's defaults. */
  http?: BootstrapOptions;
}

/** The root module of a service: the service kit, then the service's areas. */
@Module({})
export class ServiceModule {
  static register(definition: ServiceDefinition): DynamicModule {
    const { name, publishes, areas = [], controllers, providers, http: _http, ...kit } = definition;
    return {
      module: ServiceModule,
      imports: [
        ServiceKitModule.forRoot({
          ...kit,
          openApi: name in SERVICE_APIS ? (name as ApiService) : undefined,
          aggregateType: publishes ? name : undefined,
        }),
        ...areas,
      ],
      controllers,
      providers,
    };
  }
}

/** Boots a service (bootstrapService); a boot that fails is one fatal JSON line on stderr and exit code 1. */
export function runService(definition: ServiceDefinition): void {
  bootstrapService(ServiceModule.register(definition), definition.config, definition.http).catch(
    (error: unknown) => {
      const line = { level: 'fatal', service: definition.name, msg: 'boot failed', err: String(error) };
      console.error(JSON.stringify(line));
      process.exit(1);
    },
  );
}
