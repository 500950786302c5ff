// Resident memory of a running Node process after a full garbage collection, read from outside: SIGUSR1 opens the
// process's inspector on 127.0.0.1:<port>, the probe asks it to collect garbage and report process.memoryUsage(),
// then closes the inspector again. Raw RSS moves by tens of MiB with when V8 last collected; after a full GC it
// shows what the process really holds (the soak bench reports both).
import WebSocket from 'ws';

export interface AfterGc {
  rssMiB: number;
  heapUsedMiB: number;
  /** Memory outside V8's heap that JS objects hold (Buffers, typed arrays): weights, request bodies. */
  externalMiB: number;
}

const mib = (b: number) => +(b / 2 ** 20).toFixed(2);

export async function memoryAfterGc(pid: number, port = 9229, timeoutMs = 15_000): Promise<AfterGc> {
  process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + timeoutMs;
  let target: { webSocketDebuggerUrl: string } | undefined;
  while (!target) {
    if (Date.now() > deadline) throw new Error(`process ${pid}: no inspector on 127.0.0.1:${port} within ${timeoutMs} ms`);
    try {
      const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2000) })).json()) as { webSocketDebuggerUrl: string }[];
      target = list[0];
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  try {
    await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
    let next = 0;
    const call = (method: string, params: object = {}) =>
      new Promise<{ result?: { result?: { value?: unknown } } }>((resolve, reject) => {
        const id = ++next;
        const timer = setTimeout(() => reject(new Error(`process ${pid}: ${method} took over ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (m: WebSocket.RawData) => {
          const msg = JSON.parse(String(m)) as { id?: number; result?: { result?: { value?: unknown } } };
          if (msg.id !== id) return;
          clearTimeout(timer);
          ws.off('message', onMessage);
          resolve(msg);
        };
        ws.on('message', onMessage);
        ws.send(JSON.stringify({ id, method, params }));
      });
    await call('HeapProfiler.collectGarbage');
    const r = await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())' });
    const mem = JSON.parse(String(r.result?.result?.value)) as NodeJS.MemoryUsage;
    // Closed from inside, after this answer, so the next probe finds the port free. `require` is the console's,
    // there only while the expression runs (an ES module has none): taken then, not in the timer, which would
    // throw and end the process.
    await call('Runtime.evaluate', { expression: "(() => { const inspector = require('node:inspector'); setTimeout(() => inspector.close(), 50); return 1; })()", includeCommandLineAPI: true });
    return { rssMiB: mib(mem.rss), heapUsedMiB: mib(mem.heapUsed), externalMiB: mib(mem.external) };
  } finally {
    ws.close();
    // Wait until the port is free again.
    for (let i = 0; i < 50; i++) {
      try {
        await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(500) });
        await new Promise((r) => setTimeout(r, 100));
      } catch {
        break;
      }
    }
  }
}
