// The flags every service command shares: --host, --port, --data, with environment-variable equivalents.
import { parseArgs } from 'node:util';
import path from 'node:path';

export interface ServiceArgSpec {
  /** Shown in errors and in the "listening on" line. */
  name: string;
  /** Environment prefix: STORE → STORE_HOST, STORE_PORT, STORE_DATA. */
  envPrefix: string;
  defaultPort: number;
  defaultDataDir: string;
  /** Extra string flags of this service, e.g. { store: 'AGL_STORE_URL' } (flag name → env name). */
  extra?: Record<string, string>;
}

export interface ServiceArgs {
  host: string;
  port: number;
  dataDir: string;
  /** Values of the extra flags (flag, else env, else undefined). */
  values: Record<string, string | undefined>;
  /** --trusted-network or AGL_TRUSTED_NETWORK=1: the service may listen beyond loopback without its token. */
  trustedNetwork: boolean;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A service that must not start as things are (damaged state): runMain prints its message, one line, and exits 1. */
export class StartRefused extends Error {
  override readonly name: string = 'StartRefused';
}

export function parseServiceArgs(argv: string[], spec: ServiceArgSpec, env: NodeJS.ProcessEnv = process.env): ServiceArgs {
  const options: Record<string, { type: 'string' | 'boolean' }> = { host: { type: 'string' }, port: { type: 'string' }, data: { type: 'string' }, 'trusted-network': { type: 'boolean' } };
  for (const flag of Object.keys(spec.extra ?? {})) options[flag] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: false, strict: true });
  } catch (err) {
    throw new UsageError(`${spec.name}: ${(err as Error).message}`);
  }
  const v = parsed.values as Record<string, string | undefined>;
  const trustedNetwork = (parsed.values as Record<string, unknown>)['trusted-network'] === true || /^(1|true|yes)$/i.test(env.AGL_TRUSTED_NETWORK ?? '');
  const host = v.host ?? env[`${spec.envPrefix}_HOST`] ?? '127.0.0.1';
  const portText = v.port ?? env[`${spec.envPrefix}_PORT`] ?? String(spec.defaultPort);
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`${spec.name}: --port must be an integer from 0 to 65535, got ${JSON.stringify(portText)}`);
  }
  const dataDir = path.resolve(v.data ?? env[`${spec.envPrefix}_DATA`] ?? spec.defaultDataDir);
  const values: Record<string, string | undefined> = {};
  for (const [flag, envName] of Object.entries(spec.extra ?? {})) values[flag] = v[flag] ?? env[envName];
  return { host, port, dataDir, values, trustedNetwork };
}

/** The one line every service prints when it is ready; tests and the launcher wait for it. */
export function announceListening(name: string, host: string, port: number): void {
  const shown = host.includes(':') ? `[${host}]` : host;
  process.stdout.write(`${name} listening on http://${shown}:${port}\n`);
}

/** How long a service takes from SIGTERM to its exit, at most (a service manager waits about 2 s, then kills). */
export const SHUTDOWN_DEADLINE_MS = 1500;

/**
 * On SIGTERM or SIGINT: runs `close` (stop accepting, finish what is in flight), then exits 0; past
 * `deadlineMs` it exits anyway, saying what it did not wait for. Call it before the service says it listens:
 * a signal that comes between the two would otherwise kill it with node's default action.
 */
export function exitOnSignal(close: () => Promise<unknown>, opts: { name?: string; deadlineMs?: number } = {}): void {
  const deadlineMs = opts.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
  const shutdown = (signal: NodeJS.Signals) => {
    setTimeout(() => {
      process.stderr.write(`${opts.name ?? 'service'}: ${signal}: closing took over ${deadlineMs} ms; exiting without waiting for the rest\n`);
      process.exit(0);
    }, deadlineMs).unref();
    void close()
      .catch((err: unknown) => process.stderr.write(`${opts.name ?? 'service'}: closing on ${signal} failed: ${(err as Error)?.message ?? String(err)}\n`))
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

/** Runs a service's main, turning a UsageError into exit code 2 with its message. */
export function runMain(main: () => Promise<void>): void {
  // A reader that went away (`npm run client -- status hello | head -1`): stop quietly, as Unix tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(process.exitCode ?? 0);
    });
  }
  main().catch((err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    if (err instanceof StartRefused) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
