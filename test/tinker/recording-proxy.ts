// A recording, fault-injecting HTTP proxy in front of a real trainer: every request is kept (method, path,
// headers, body as sent, and the status it got), and a fault rule can answer a matching request itself (a
// 409, a bodiless 400, a 429 with Retry-After, a 402 …) a given number of times before letting it through.
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  status: number;
  /** True when a fault rule answered instead of the trainer. */
  injected: boolean;
  /** True when a gate held the request until its timeout (its condition never came true). */
  gateTimedOut?: boolean;
}

/** Holds matching requests until `open(records)` is true (checked every 10 ms) or `timeoutMs` passed. */
export interface Gate {
  path: string | RegExp;
  open: (records: Recorded[]) => boolean;
  timeoutMs: number;
}

export interface Fault {
  method?: string;
  /** The path under /api/v1 (a string matches exactly, a RegExp anywhere). */
  path: string | RegExp;
  /** How many matching requests get the fault (then they pass). */
  times: number;
  status: number;
  headers?: Record<string, string>;
  /** Default: a JSON error body; '' sends none (content-length 0). */
  body?: string;
  /** Only requests whose body passes this (e.g. a certain seq_id) get the fault. */
  when?: (body: Buffer) => boolean;
}

export interface RecordingProxy {
  url: string;
  records: Recorded[];
  fault(f: Fault): void;
  gate(g: Gate): void;
  /** Records of one endpoint (path under /api/v1), faults included. */
  calls(path: string | RegExp, method?: string): Recorded[];
  close(): Promise<void>;
}

const matches = (p: string | RegExp, path: string) => (typeof p === 'string' ? p === path : p.test(path));

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const records: Recorded[] = [];
  const faults: Fault[] = [];
  const gates: Gate[] = [];
  const held = async (rec: Recorded) => {
    for (const g of gates) {
      if (!matches(g.path, rec.path)) continue;
      const until = Date.now() + g.timeoutMs;
      while (!g.open(records)) {
        if (Date.now() > until) {
          rec.gateTimedOut = true;
          break;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '').replace(/^\/api\/v1/, '').split('?')[0];
      const rec: Recorded = { method: req.method ?? 'GET', path, headers: req.headers, body, status: 0, injected: false };
      records.push(rec);
      const fault = faults.find((f) => f.times > 0 && (!f.method || f.method === rec.method) && matches(f.path, path) && (!f.when || f.when(body)));
      if (fault) {
        fault.times--;
        const text = fault.body ?? JSON.stringify({ error: `injected ${fault.status}`, category: 'server' });
        rec.status = fault.status;
        rec.injected = true;
        res.writeHead(fault.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...fault.headers });
        res.end(text);
        return;
      }
      await held(rec);
      const out = request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (up) => {
          rec.status = up.statusCode ?? 0;
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    records,
    fault: (f) => faults.push(f),
    gate: (g) => gates.push(g),
    calls: (p, method) => records.filter((r) => matches(p, r.path) && (!method || r.method === method)),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
