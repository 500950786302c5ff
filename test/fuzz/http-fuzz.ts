// Shared pieces of the HTTP fuzz tests: a keep-alive sender of arbitrary requests, a raw-socket sender for
// request lines node:http would refuse to send, arbitraries for hostile bodies, and the figures they report.
import http from 'node:http';
import net from 'node:net';
import fc from 'fast-check';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

export function send(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  const url = new URL(base);
  // A body always framed: node's client sends a DELETE's or an OPTIONS' body unframed (the server would read it
  // as the next request on the connection) unless told its length.
  if (body !== undefined && !Object.keys(headers).some((h) => /^(content-length|transfer-encoding)$/i.test(h))) {
    headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, headers, agent, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** Writes `bytes` on a fresh connection and parses whatever HTTP answer comes back (status 0 = none). */
export function sendRaw(base: string, bytes: Buffer): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve) => {
    const sock = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: m ? Number(m[1]) : 0, headers: {}, text: split >= 0 ? text.slice(split + 4) : '' });
    };
    const timer = setTimeout(finish, 3000);
    sock.on('data', (c: Buffer) => {
      chunks.push(c);
      // One answer is enough: stop when the announced body has arrived.
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const len = /content-length: (\d+)/i.exec(text.slice(0, split));
      if (split >= 0 && (!len || Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(len[1]))) {
        clearTimeout(timer);
        finish();
      }
    });
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      finish();
    });
    sock.write(bytes);
  });
}

/** A JSON answer, parsed, or a failure message. */
export function jsonOf(a: Answer): unknown {
  try {
    return JSON.parse(a.text);
  } catch {
    throw new Error(`HTTP ${a.status} answer is not JSON: ${JSON.stringify(a.text.slice(0, 200))}`);
  }
}

/** Never a 5xx; an error answer is JSON (or, on OTLP's protobuf path, a protobuf google.rpc.Status as OTLP says). */
export function checkAnswer(a: Answer, where: string): void {
  if (a.status >= 500 || a.status < 200) throw new Error(`${where}: HTTP ${a.status} ${a.text.slice(0, 300)}`);
  if (a.status >= 400 && !String(a.headers['content-type'] ?? '').startsWith('application/x-protobuf')) jsonOf(a);
}

/** Bytes that are not valid UTF-8 (lone continuation bytes, overlongs, truncated sequences, surrogates). */
export const invalidUtf8 = fc.oneof(
  fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xe2, 0x82]), Buffer.from([0x80, 0x80])),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((a) => Buffer.from(a)),
).chain((bad) => fc.tuple(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 })).map(([a, b]) => Buffer.concat([Buffer.from(a), bad, Buffer.from(b)])));

/** JSON text of a value that may hold hostile numbers and strings; sometimes truncated or with Python's NaN. */
export const hostileJsonText = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => {
    const t = JSON.stringify(v) ?? 'null';
    return t.slice(0, Math.max(1, t.length - 1));
  }),
  fc.constantFrom('NaN', '{"reward": NaN}', '[Infinity, -Infinity]', '{"a":1e999}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', '"\\ud800"', '{}', '[]', 'null', ''),
);

/** Request paths: mostly near our routes, with hostile segments. */
export function hostilePath(prefixes: string[]): fc.Arbitrary<string> {
  const segment = fc.oneof(
    fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
    fc.constantFrom('..', '.', '%00', '%ff', '%', '%%', '%2F', '%E2%82', '{rollout_id}', 'latest', 'search', 'x'.repeat(3000), ''),
  );
  return fc.tuple(fc.constantFrom(...prefixes), fc.array(segment, { maxLength: 4 }), fc.constantFrom('', '?', '?limit=-1', '?offset=abc&limit=1e9', '?status_in=%ff', '#x'))
    .map(([p, segs, q]) => `${p}${segs.length ? '/' + segs.join('/') : ''}${q}`.replace(/^([^/])/, '/$1'));
}

export const methods = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');

/** Header values node:http will send (visible ASCII), hostile in meaning. */
export const headerValue = fc.oneof(
  fc.stringMatching(/^[\x21-\x7e ]{0,40}$/),
  fc.constantFrom('application/json', 'application/x-protobuf', 'text/plain', 'gzip', 'deflate', 'br', 'identity', 'application/json; charset=latin1', ''),
);

export interface FuzzFigures {
  property: string;
  runs: number;
  ms: number;
}

export const figures: FuzzFigures[] = [];
/** One seed for every property of a run (FUZZ_SEED=<it> reruns it); printed by report(). */
export const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

/** Runs a property with a fixed number of runs; records runs and time. The seed is printed for reproduction. */
export async function fuzz<T>(property: string, arb: fc.Arbitrary<T>, numRuns: number, check: (v: T) => Promise<void>): Promise<void> {
  const seed = SEED;
  const t0 = performance.now();
  // A failure reported in a few lines: a counterexample may hold a 6,000-character string or a body of bytes.
  const asyncReporter = async (d: fc.RunDetails<[T]>): Promise<void> => {
    if (!d.failed) return;
    const why = String((d.errorInstance as Error | undefined)?.message ?? d.errorInstance ?? 'failed').slice(0, 1500);
    throw new Error(`${property}: failed after ${d.numRuns} runs (FUZZ_SEED=${seed}, path ${d.counterexamplePath}): ${why}\n  counterexample: ${fc.stringify(d.counterexample).slice(0, 1500)}`);
  };
  await fc.assert(fc.asyncProperty(arb, check), { numRuns, seed, asyncReporter });
  figures.push({ property, runs: numRuns, ms: Math.round(performance.now() - t0) });
}

export function report(suite: string): void {
  const total = figures.reduce((a, f) => ({ runs: a.runs + f.runs, ms: a.ms + f.ms }), { runs: 0, ms: 0 });
  process.stdout.write(`# fuzz ${suite}: ${figures.length} properties, ${total.runs} runs in ${(total.ms / 1000).toFixed(1)} s (FUZZ_SEED=${SEED})\n`);
  for (const f of figures) process.stdout.write(`#   ${f.property}: ${f.runs} runs, ${f.ms} ms\n`);
}
