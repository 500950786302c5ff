// Where the Temporal server is, how to connect to it, and which task queue the training worker polls. The
// connection comes from Temporal's standard environment configuration (@temporalio/envconfig, as the Temporal
// CLI and every SDK read it): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
// TEMPORAL_PROFILE and its TOML file (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml). Flags win.
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';

export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** The Temporal UI, for links printed to the user. */
  uiUrl: string;
  /** For Connection.connect and NativeConnection.connect: address, TLS, API key, gRPC metadata. */
  connection: Pick<NativeConnectionOptions, 'address' | 'tls' | 'apiKey' | 'metadata'>;
  /** How the connection is secured, for messages: "plain", "TLS", "mTLS", "TLS + API key". */
  security: string;
  /** The profile the settings came from, when one was named. */
  profile?: string;
  /**
   * Where the address was configured ("--address", "TEMPORAL_ADDRESS", "profile lab of ~/.config/temporalio/temporal.toml");
   * undefined when nothing names one and the address is the default.
   */
  addressFrom?: string;
}

export interface SettingsFlags {
  address?: string;
  namespace?: string;
  taskQueue?: string;
  uiUrl?: string;
  /** A profile of the TOML file (else TEMPORAL_PROFILE, else "default"). */
  profile?: string;
}

export const DEFAULT_TASK_QUEUE = 'agl-training';
export const DEFAULT_ADDRESS = '127.0.0.1:7233';

/** A setting that cannot be used (a profile that is not in the file, a certificate file that is not there). */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

export function temporalSettings(flags: SettingsFlags = {}, env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const vars: Record<string, string> = {};
  // An empty variable counts as unset (envconfig would take an empty API key as a key, and turn TLS on for it).
  for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') vars[k] = v;
  const profile = flags.profile ?? (env.TEMPORAL_PROFILE || undefined);
  let loaded;
  try {
    loaded = loadConnectConfig(profile, vars);
  } catch (err) {
    const where = env.TEMPORAL_CONFIG_FILE ? ` (TEMPORAL_CONFIG_FILE=${env.TEMPORAL_CONFIG_FILE})` : '';
    throw new SettingsError(`Temporal connection settings${profile ? ` of profile ${profile}` : ''}${where}: ${oneLine(err)}`);
  }
  const c = loaded.connectionOptions;
  const address = flags.address ?? c.address ?? DEFAULT_ADDRESS;
  const addressFrom = flags.address
    ? '--address'
    : vars.TEMPORAL_ADDRESS
      ? 'TEMPORAL_ADDRESS'
      : c.address
        ? `profile ${profile ?? 'default'} of ${env.TEMPORAL_CONFIG_FILE || '~/.config/temporalio/temporal.toml'}`
        : undefined;
  const connection: TemporalSettings['connection'] = { address };
  if (c.tls !== undefined) connection.tls = c.tls;
  if (c.apiKey !== undefined) connection.apiKey = c.apiKey;
  if (c.metadata && Object.keys(c.metadata).length) connection.metadata = c.metadata;
  return {
    address,
    namespace: flags.namespace ?? loaded.namespace ?? 'default',
    taskQueue: flags.taskQueue ?? env.AGL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    uiUrl: (flags.uiUrl ?? env.TEMPORAL_UI_URL ?? uiUrlBeside(address)).replace(/\/+$/, ''),
    connection,
    security: securityOf(connection),
    ...(profile ? { profile } : {}),
    ...(addressFrom ? { addressFrom } : {}),
  };
}

/** envconfig 1.24 fails on a TOML file with no profile at all (an empty file): read as no file, as the CLI does. */
function loadConnectConfig(profile: string | undefined, vars: Record<string, string>) {
  try {
    return loadClientConnectConfig({ profile, overrideEnvVars: vars });
  } catch (err) {
    if (!(err instanceof TypeError && /reading '/.test(err.message))) throw err;
    if (profile) throw new Error(`profile '${profile}' not found: the config file has no profiles`);
    return loadClientConnectConfig({ overrideEnvVars: vars, disableFile: true });
  }
}

function securityOf(c: TemporalSettings['connection']): string {
  if (!c.tls && !c.apiKey) return 'plain';
  const mtls = typeof c.tls === 'object' && c.tls?.clientCertPair !== undefined;
  return `${mtls ? 'mTLS' : 'TLS'}${c.apiKey ? ' + API key' : ''}`;
}

/** Where the settings say to connect, for messages: "127.0.0.1:7233 (mTLS, profile prod)". */
export function describeConnection(s: TemporalSettings): string {
  const extra = [s.security !== 'plain' ? s.security : '', s.profile ? `profile ${s.profile}` : ''].filter(Boolean).join(', ');
  return `${s.address}${extra ? ` (${extra})` : ''}`;
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.trim();
}

/** The UI where the Temporal CLI's dev server puts it: the frontend's host, its port + 1000 (7233 → 8233). */
export function uiUrlBeside(address: string): string {
  const m = /^(.*):(\d+)$/.exec(address.replace(/^\w+:\/\//, ''));
  return m ? `http://${m[1]}:${Number(m[2]) + 1000}` : 'http://127.0.0.1:8233';
}

export function workflowUiLink(s: Pick<TemporalSettings, 'uiUrl' | 'namespace'>, workflowId: string): string {
  return `${s.uiUrl}/namespaces/${encodeURIComponent(s.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
