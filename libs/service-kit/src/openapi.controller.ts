import { Controller, Get, Inject, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ApiService, openApiDocument } from '@checkout/contracts';

/** Injection token of the service whose OpenAPI document `GET /docs/openapi.json` answers. */
export const OPENAPI_SERVICE = Symbol('OPENAPI_SERVICE');

/** `GET /docs/openapi.json` on the public port, without a key: the service's OpenAPI 3.1 document. */
@Controller('docs')
export class OpenApiController {
  private document?: object;

  constructor(@Inject(OPENAPI_SERVICE) private readonly service: ApiService) {}

  @Get('openapi.json')
  openapi(): object {
    // Built on first use: nothing at boot for a document that is rarely asked for.
    this.document ??= openApiDocument(this.service);
    return this.document;
  }
}

/** The HTTP routes of controllers as `<method> <OpenAPI path>` (`get /v1/orders/{orderId}`), to compare with a contract. */
export function routesOf(controllers: Type[]): string[] {
  const routes: string[] = [];
  for (const controller of controllers) {
    const base = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = proto[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (path === undefined || method === undefined) continue;
      for (const prefix of base)
        for (const suffix of [path].flat()) {
          const full = `/${[prefix, suffix].join('/')}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
          routes.push(`${RequestMethod[method].toLowerCase()} ${full.replace(/:(\w+)/g, '{$1}')}`);
        }
    }
  }
  return routes.sort();
}
