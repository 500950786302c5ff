// Reading request bodies and writing JSON answers and errors (errors in the format of the API that was called).
import type http from 'node:http';
import { clientMessage } from '../common/front-door';
import { ApiError, badRequest } from './errors';
import { SamplerError } from './sampler';

export function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Any failure as an ApiError (a sampler's status kept, anything else a 500). */
export function asApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof SamplerError) {
    return new ApiError(err.status, `sampler: ${err.message}`, err.status < 500 ? 'invalid_request_error' : 'api_error', null, 'sampler_error');
  }
  return new ApiError(500, `internal error: ${(err as Error)?.message ?? String(err)}`, 'api_error', null, 'internal_error');
}

/** Answers an error, in OpenAI's format unless `format` gives the called API's own. */
export function sendError(res: http.ServerResponse, err: unknown, log: (l: string) => void, format: (e: ApiError) => unknown = (e) => e.body()): void {
  const e = asApiError(err);
  if (e.status >= 500) log(`error ${e.status}: ${e.message}`);
  // One line, bounded, no path of this machine, whatever an inner error said (common/front-door.ts).
  e.message = clientMessage(e.message, { [process.cwd()]: '<proxy dir>' }, 1000);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refused body was not read to its end: the connection cannot carry another request, so close it (a kept-alive
  // client would otherwise send its next request into the unread rest and wait forever).
  const headers = e.status === 413 ? { ...e.headers, connection: 'close' } : e.headers;
  send(res, e.status === 499 ? 400 : e.status, format(e), headers);
}

export async function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ApiError(413, `request body is larger than ${limit} bytes`, 'invalid_request_error', null, 'body_too_large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw badRequest('the request body is empty; expected JSON', null, 'invalid_json');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${(err as Error).message}`, null, 'invalid_json');
  }
}
