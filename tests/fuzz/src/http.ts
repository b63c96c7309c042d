import { request as httpRequest } from 'node:http';
import { z } from 'zod';
import { loadStackConfig } from '@checkout/testing';

/** The services with an HTTP API in the local stack. */
export type FuzzService =
  'order' | 'inventory' | 'payment' | 'fulfillment' | 'saga-tracker' | 'psp-simulator';

/** One raw request: the path is sent byte for byte (no URL normalisation), headers and body as given. */
export interface RawRequest {
  service: FuzzService;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

/** One raw answer: status, headers, body text and its JSON (undefined when not JSON). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** The error body every service answers with (PRODUCT.md section 4): `{ error, message, ...details }`. */
export const ErrorShape = z.looseObject({
  error: z.string().regex(/^[A-Z][A-Z0-9_.]*$/),
  message: z.string(),
});

const ports = loadStackConfig().servicePorts;

/**
 * Sends one request over a fresh connection with node:http, which (unlike fetch) sends any path and any header
 * as it is; a connection reset by the server is an answer of its own (status 0), so a crash is never hidden.
 */
export function send(req: RawRequest, timeoutMs = 15_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers, connection: 'close' };
    if (req.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
      headers['content-length'] = req.body.length;
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port: ports[req.service],
        method: req.method,
        path: req.path,
        headers,
        timeout: timeoutMs,
        insecureHTTPParser: true,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    r.on('timeout', () =>
      r.destroy(new Error(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`)),
    );
    r.on('error', (error: NodeJS.ErrnoException) => {
      // The server hung up on a request it would not read (e.g. a body far over the limit): no answer at all.
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE')
        resolve({ status: 0, headers: {}, text: String(error), json: undefined });
      else reject(error);
    });
    r.end(req.body);
  });
}

/** Why an answer breaks "bad input gets a clear 4xx error", or null when it is a 2xx or a 4xx of the shape. */
export function badAnswer(answer: RawAnswer, method = 'GET'): string | null {
  if (answer.status >= 200 && answer.status < 300) return null;
  if (answer.status < 400 || answer.status >= 500)
    return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  // A HEAD answer has no body by definition: its status is all there is to check.
  if (method === 'HEAD') return null;
  if (!ErrorShape.safeParse(answer.json).success)
    return `answered ${answer.status} without the error shape: ${answer.text.slice(0, 300)}`;
  return null;
}

/** A short description of a request for failure messages. */
export function describeRequest(req: RawRequest): string {
  const body =
    req.body === undefined
      ? ''
      : ` body(${req.body.length} B)=${JSON.stringify(req.body.subarray(0, 200).toString('latin1'))}`;
  return `${req.method} ${req.service} ${req.path} headers=${JSON.stringify(req.headers).slice(0, 400)}${body}`;
}
