import { Controller, Get, Inject } from '@nestjs/common';
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
