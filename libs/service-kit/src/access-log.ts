import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { requestTraceFields } from '@checkout/tracing';

const INTERNAL_REQUEST = Symbol('internal-request');
type MarkedRequest = IncomingMessage & { [INTERNAL_REQUEST]?: true };

/**
 * Marks a request for an internal route (/metrics, /health/*: scraped and probed, not logged). Called by the kit's
 * first hook, which tells the internal routes apart once per request for its span and its port check too.
 */
export function markInternalRequest(req: IncomingMessage): void {
  (req as MarkedRequest)[INTERNAL_REQUEST] = true;
}

/** What names a request in its access line: its id, method, URL as sent, and its trace when it is traced. */
const requestFields = (req: FastifyRequest) => ({
  reqId: req.id,
  method: req.method,
  url: req.url,
  ...requestTraceFields(req.raw),
});

/**
 * The access log: one line per API request once its answer is sent (fastify's `onResponse`): `reqId`, `method`,
 * `url` as sent, `statusCode`, `responseTime` (ms) and the request's `trace_id` and `span_id` when it is traced.
 * Flat fields: `req` and `res` are pino-http's, whose serializers expect Node's request and answer objects. Probes and
 * scrapes (the internal routes, markInternalRequest) are not logged. A 5xx is logged at `error`.
 *
 * It is written by a fastify hook to the service's root logger (nestjs-pino's `PinoLogger.root`), not by pino-http
 * as Nest middleware: that ran through @fastify/middie and bound a child logger per request in an
 * AsyncLocalStorage, about a tenth of a refused checkout's CPU (bench/results/s44/http-*). A handler's own lines
 * find the request by its `trace_id`, which every line written in a span carries (service-kit.module's mixin).
 */
export function logAccess(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (!(req.raw as MarkedRequest)[INTERNAL_REQUEST]) {
    const status = reply.statusCode;
    const line = { ...requestFields(req), statusCode: status, responseTime: Math.round(reply.elapsedTime) };
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
  if (!(req.raw as MarkedRequest)[INTERNAL_REQUEST])
    PinoLogger.root.warn(requestFields(req), 'request aborted');
  done();
}
