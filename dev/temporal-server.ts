// The Temporal dev server: `temporal server start-dev` on 127.0.0.1 with a SQLite file (so runs survive a
// restart), the UI on 8233, and the training run's search attributes registered. A server already answering
// where Temporal's standard settings point (TEMPORAL_ADDRESS, TEMPORAL_PROFILE...) is used instead; one they point
// at that does not answer is an error, never replaced by a dev server elsewhere.
import { execFile } from 'node:child_process';
import net from 'node:net';
import type { Client } from '@temporalio/client';
import { describeConnection, temporalSettings, type TemporalSettings } from '../common/temporal-settings';
import { connectClient } from '../cli/temporal-connect';
import { checkSearchAttributes, describeProblem, registerSearchAttributes, type OperatorCalls } from '../cli/search-attribute-setup';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startProcess, type ManagedProcess } from '../common/processes';
import { ALL_SEARCH_ATTRIBUTES } from '../shared/search-attributes';
import { provisionTemporalCli } from './temporal-cli';
import { setTimeout as sleep } from 'node:timers/promises';

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
  /** Register the runs' search attributes at start (default true); false gives a fresh server as others run it. */
  searchAttributes?: boolean;
}

export interface TemporalServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  /** How to connect (TLS, API key) when it is a server we did not start; plain otherwise. */
  connection?: TemporalSettings['connection'];
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
    await sleep(300);
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
  if (opts.searchAttributes !== false) args.push(...searchAttributeFlags());
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
 * Uses the server Temporal's standard settings name (TEMPORAL_ADDRESS, TEMPORAL_PROFILE, TLS, API key: see
 * common/temporal-settings.ts), or one already answering on the port we would start ours on (an earlier
 * `npm start` left running, say), otherwise starts a dev server. A configured address where nothing answers is an
 * error naming it and where it was configured: a dev server of our own elsewhere would silently be another server
 * than the one the user named (unless the address is where ours would listen: then ours is started there). On a
 * server we did not start, the runs' search attributes are registered when missing; a server that does not allow it
 * (Temporal Cloud) is named with what to add.
 */
export async function ensureTemporal(opts: DevServerOptions = {}, log: (line: string) => void = () => {}): Promise<TemporalServer> {
  const settings = temporalSettings();
  const local = `${opts.host ?? '127.0.0.1'}:${opts.port ?? 7233}`;
  const candidates: TemporalSettings[] = [settings];
  if (!settings.addressFrom && settings.address !== local) candidates.push({ ...settings, address: local, connection: { address: local }, security: 'plain', namespace: 'default' });
  for (const s of candidates) {
    const client = await connectIfListening(s);
    if (!client) continue;
    try {
      log(`using the Temporal server already answering at ${describeConnection(s)}`);
      await ensureSearchAttributes(client.connection.operatorService, s);
    } finally {
      await client.connection.close();
    }
    return { address: s.address, namespace: s.namespace, connection: s.connection, stop: async () => {} };
  }
  if (settings.addressFrom && !(settings.address === local && settings.security === 'plain')) throw new Error(notAnswering(settings, local));
  if (settings.addressFrom) log(`nothing answers at ${settings.address} (${settings.addressFrom}): starting a Temporal dev server there`);
  return startDevServer(opts);
}

/** Why a configured server is not used, and the two ways on: start it, or let npm start run its own. */
function notAnswering(s: TemporalSettings, local: string): string {
  const unset =
    s.addressFrom === 'TEMPORAL_ADDRESS'
      ? 'unset TEMPORAL_ADDRESS'
      : s.addressFrom === '--address'
        ? 'leave out --address'
        : `remove that profile's address (or name another profile with TEMPORAL_PROFILE)`;
  return (
    `no Temporal server answers at ${s.address}${s.security !== 'plain' ? ` (${s.security})` : ''}, which ${s.addressFrom} names: start it there, or ${unset} ` +
    `and npm start runs a Temporal dev server of its own on ${local}`
  );
}

/** A connected client when something listens at the address; null when nothing does; throws when it refuses us. */
async function connectIfListening(s: TemporalSettings): Promise<Client | null> {
  if (!(await tcpListening(s.address))) return null;
  return connectClient(s);
}

async function ensureSearchAttributes(op: OperatorCalls, s: TemporalSettings): Promise<void> {
  const before = await checkSearchAttributes(op, s.namespace).catch(() => null);
  if (before && !before.missing.length && !before.wrongType.length) return;
  try {
    await registerSearchAttributes(op, s.namespace);
  } catch {
    const problem = before && describeProblem(before, s.namespace, s.address);
    if (problem) throw new Error(problem);
  }
}

function tcpListening(address: string): Promise<boolean> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(address.slice(i + 1));
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(3000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
