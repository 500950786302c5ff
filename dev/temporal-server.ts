// The Temporal dev server: `temporal server start-dev` on 127.0.0.1 with a SQLite file (so runs survive a
// restart), the UI on 8233, and the training run's search attributes registered. A server already answering
// at TEMPORAL_ADDRESS is used as it is.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, type ManagedProcess } from '../common/processes';
import { ALL_SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { provisionTemporalCli } from './temporal-cli';

const run = promisify(execFile);

export interface DevServerOptions {
  host?: string;
  port?: number;
  /** 0 = no UI. */
  uiPort?: number;
  /** SQLite file; undefined = in memory. */
  dbFile?: string;
  namespace?: string;
  /** Extra `--dynamic-config-value` entries, e.g. `limit.historyCount.suggestContinueAsNew=60`. */
  dynamicConfig?: string[];
  echo?: boolean;
}

export interface TemporalServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  /** The process, when we started it; undefined when an existing server is used. */
  process?: ManagedProcess;
  stop(): Promise<void>;
}

/** The command-line type names of our search attributes. */
function searchAttributeFlags(): string[] {
  const typeName: Record<string, string> = {
    KEYWORD: 'Keyword',
    INT: 'Int',
    DOUBLE: 'Double',
    TEXT: 'Text',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
    KEYWORD_LIST: 'KeywordList',
  };
  return ALL_SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${typeName[k.type]}`]);
}

/** True when a Temporal frontend answers a health check at `address` (host:port). */
export async function temporalAnswers(address: string, cliPath?: string): Promise<boolean> {
  const cli = cliPath ?? (await provisionTemporalCli()).path;
  try {
    const { stdout } = await run(cli, ['operator', 'cluster', 'health', '--address', address, '--command-timeout', '3s'], { timeout: 10_000 });
    return /SERVING/.test(stdout);
  } catch {
    return false;
  }
}

export async function waitForTemporal(address: string, cliPath: string, timeoutMs: number, proc?: ManagedProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc && proc.child.exitCode !== null) {
      throw new Error(`temporal dev server exited with code ${proc.child.exitCode}:\n${proc.output().slice(-3000)}`);
    }
    if (await temporalAnswers(address, cliPath)) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`Temporal at ${address} did not become healthy within ${timeoutMs} ms${proc ? `:\n${proc.output().slice(-3000)}` : ''}`);
}

export async function startDevServer(opts: DevServerOptions = {}): Promise<TemporalServer> {
  const cli = await provisionTemporalCli();
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  const namespace = opts.namespace ?? 'default';
  const args = ['server', 'start-dev', '--ip', host, '--port', String(port), '--namespace', namespace, '--log-level', 'warn'];
  if (opts.uiPort === 0) args.push('--headless');
  else args.push('--ui-ip', host, '--ui-port', String(opts.uiPort ?? 8233));
  if (opts.dbFile) {
    mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
  }
  args.push(...searchAttributeFlags());
  // Slow CI machines can trip the default 10 s workflow task timeout.
  for (const dc of ['history.defaultWorkflowTaskTimeout="60s"', ...(opts.dynamicConfig ?? [])]) args.push('--dynamic-config-value', dc);

  const address = `${host}:${port}`;
  const proc = await startProcess({ name: 'temporal', command: cli.path, args, echo: opts.echo });
  await waitForTemporal(address, cli.path, 60_000, proc);
  return {
    address,
    namespace,
    uiUrl: opts.uiPort === 0 ? undefined : `http://${host}:${opts.uiPort ?? 8233}`,
    process: proc,
    stop: () => proc.stop(10_000),
  };
}

/**
 * Uses the server at TEMPORAL_ADDRESS, or one already answering on the port we would start ours on (an earlier
 * `npm start` left running, say), otherwise starts a dev server.
 */
export async function ensureTemporal(opts: DevServerOptions = {}, log: (line: string) => void = () => {}): Promise<TemporalServer> {
  const candidates = [process.env.TEMPORAL_ADDRESS, `${opts.host ?? '127.0.0.1'}:${opts.port ?? 7233}`].filter((a): a is string => !!a);
  for (const address of candidates) {
    if (await temporalAnswers(address)) {
      log(`using the Temporal server already answering at ${address}`);
      return { address, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default', stop: async () => {} };
    }
  }
  return startDevServer(opts);
}
