import type { FastifyReply, FastifyRequest } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { requestTraceFields } from '@checkout/tracing';
import { INTERNAL_ROUTE } from './config';

/**
 * The access log: one line per API request once its answer is sent (fastify's `onResponse`): `reqId`, `method`,
 * `url` as sent, `statusCode`, `responseTime` (ms) and the request's `trace_id` and `span_id` when it is traced.
 * Flat fields: `req` and `res` are pino-http's, whose serializers expect Node's request and answer objects. Probes and
 * scrapes (the internal routes) are not logged. A 5xx is logged at `error`.
 *
 * It is written by a fastify hook to the service's root logger (nestjs-pino's `PinoLogger.root`), not by pino-http
 * as Nest middleware: that ran through @fastify/middie and bound a child logger per request in an
 * AsyncLocalStorage, about a tenth of a refused checkout's CPU (bench/results/s44/http-*). A handler's own lines
 * find the request by its `trace_id`, which every line written in a span carries (service-kit.module's mixin).
 */
export function logAccess(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const url = req.url;
  if (!INTERNAL_ROUTE.test(url)) {
    const status = reply.statusCode;
    const line = {
      reqId: req.id,
      method: req.method,
      url,
      statusCode: status,
      responseTime: Math.round(reply.elapsedTime),
      ...requestTraceFields(req.raw),
    };
    if (status >= 500) PinoLogger.root.error(line, 'request errored');
    else PinoLogger.root.info(line, 'request completed');
  }
  done();
}

/**
 * A request whose client went away before sending all of it (fastify's `onRequestAbort`): no answer is sent, so
 * `logAccess` never sees it; logged at `warn`.
 */
export function logAbort(req: FastifyRequest, done: () => void): void {
  if (!INTERNAL_ROUTE.test(req.url))
    PinoLogger.root.warn(
      { reqId: req.id, method: req.method, url: req.url, ...requestTraceFields(req.raw) },
      'request aborted',
    );
  done();
}
