import { z } from 'zod';
import {
  ZodOpenApiOperationObject,
  ZodOpenApiPathsObject,
  ZodOpenApiResponsesObject,
  createDocument,
  oas31,
} from 'zod-openapi';
import { Endpoint, ServiceApi, errorCodesOf } from './api';
import { ErrorBody, HTTP_ERRORS, HttpErrorCode } from './errors';
import { FULFILLMENT_API } from './fulfillment';
import { INVENTORY_API } from './inventory';
import { ORDER_API } from './order';
import { PAYMENT_API } from './payment';
import { SAGA_TRACKER_API } from './saga-tracker';

/** The public HTTP API of every service that serves an OpenAPI document, by service name. */
export const SERVICE_APIS = {
  order: ORDER_API,
  inventory: INVENTORY_API,
  payment: PAYMENT_API,
  fulfillment: FULFILLMENT_API,
  'saga-tracker': SAGA_TRACKER_API,
} as const satisfies Record<string, ServiceApi>;
export type ApiService = keyof typeof SERVICE_APIS;

/** The operations of a service's contract as `<method> <path>`, sorted (what its controllers must serve). */
export const contractRoutes = (service: ApiService): string[] =>
  SERVICE_APIS[service].endpoints.map((e) => `${e.method} ${e.path}`).sort();

/** Path of the OpenAPI document every service serves on its public port, without authentication. */
export const OPENAPI_PATH = '/docs/openapi.json';

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' as const } },
};

/** The error answers of an operation, one per status, each listing its codes. */
function errorResponses(codes: HttpErrorCode[]): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, HttpErrorCode[]>();
  for (const code of codes) {
    const status = HTTP_ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: ZodOpenApiResponsesObject = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = byStatus.get(status)!.sort();
    responses[String(status) as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: list.map((c) => `\`${c}\`: ${HTTP_ERRORS[c].description}`).join('\n\n'),
      ...(status === 503 ? { headers: RETRY_AFTER } : {}),
      content: {
        'application/json': {
          schema: z
            .looseObject({ error: z.enum(list as [HttpErrorCode, ...HttpErrorCode[]]) })
            .and(ErrorBody),
        },
      },
    };
  }
  return responses;
}

function operation(api: ServiceApi, endpoint: Endpoint): ZodOpenApiOperationObject {
  const { ok } = endpoint;
  return {
    operationId: `${endpoint.method}${endpoint.path.replace(/[{}]/g, '').replace(/(^|[/._-])(\w)/g, (_m, _s, c: string) => c.toUpperCase())}`,
    summary: endpoint.summary,
    ...(endpoint.description ? { description: endpoint.description } : {}),
    ...(endpoint.auth === false ? { security: [] } : {}),
    ...(endpoint.params || endpoint.query || endpoint.headers
      ? {
          requestParams: {
            ...(endpoint.params ? { path: endpoint.params } : {}),
            ...(endpoint.query ? { query: endpoint.query } : {}),
            ...(endpoint.headers ? { header: endpoint.headers } : {}),
          },
        }
      : {}),
    ...(endpoint.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: endpoint.body } } } }
      : {}),
    responses: {
      [String(ok.status)]: {
        description: ok.description,
        ...(ok.headers ? { headers: ok.headers } : {}),
        content: { [ok.mediaType ?? 'application/json']: { schema: ok.schema } },
      },
      ...errorResponses(errorCodesOf(api, endpoint)),
    },
  };
}

/** The OpenAPI 3.1 document of a service's public HTTP API, generated from its contract (libs/contracts/src/http). */
export function openApiDocument(service: ApiService): oas31.OpenAPIObject {
  const api: ServiceApi = SERVICE_APIS[service];
  const paths: ZodOpenApiPathsObject = {};
  for (const endpoint of api.endpoints) {
    paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method]: operation(api, endpoint) };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: api.title,
      version: '1',
      description: `${api.description}\n\nEvery error code is described in docs/api.md.`,
    },
    security: [{ tenantApiKey: [] }],
    components: {
      securitySchemes: {
        tenantApiKey: {
          type: 'http',
          scheme: 'bearer',
          description: "The tenant's API key: `Authorization: Bearer <key>`; the tenant comes from the key.",
        },
      },
    },
    paths,
  });
}
