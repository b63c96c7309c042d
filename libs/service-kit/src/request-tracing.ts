import { IncomingMessage, ServerResponse } from 'node:http';
import { inRequestContext, startRequestSpan } from '@checkout/tracing';

/** The internal routes, which make no trace (scraped and probed every few seconds). */
const UNTRACED = /^\/(metrics|health)([/?]|$)/;

/** Express middleware, the first of the chain: starts the request's server span (libs/tracing, request-spans.ts). */
export function traceRequest(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (!UNTRACED.test(req.url ?? '/')) startRequestSpan(req, res);
  next();
}

/**
 * Express middleware, right after the body parser: runs the rest of the chain (guards, pipes, the route's handler
 * and what it awaits) with the request's span active. Before the body is read would not do: the parser resumes
 * from the socket's events, outside any context a middleware made active. (A Nest interceptor would, but running
 * Nest's interceptor pipeline for every request cost as much as the instrumentation this replaces.)
 */
export function activateRequestSpan(req: IncomingMessage, _res: ServerResponse, next: () => void): void {
  inRequestContext(req, next);
}
