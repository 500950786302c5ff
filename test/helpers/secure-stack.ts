// A whole local stack (Temporal dev server, store, trainer, proxy, worker, runners) on free ports with every
// access token set: AGL_STORE_TOKEN, AGL_PROXY_ADMIN_TOKEN, AGL_TRAINER_TOKEN (= TINKER_API_KEY, the key the
// Tinker client sends). The tokens go into this process's environment too, so activities called in-process
// authenticate exactly as the worker does; a client that forgot its token fails with 401.
import { randomBytes } from 'node:crypto';
import type { Stack } from '../../dev/stack';
import { startTestStack } from './local-run';

export interface Secrets {
  tinkerApiKey: string;
  storeToken: string;
  proxyAdminToken: string;
}

export function makeSecrets(): Secrets {
  const r = () => randomBytes(12).toString('hex');
  return { tinkerApiKey: `tml-${r()}`, storeToken: `store-${r()}`, proxyAdminToken: `admin-${r()}` };
}

/** Puts the secrets into process.env (inherited by every child the stack starts). */
export function exportSecrets(s: Secrets): void {
  process.env.TINKER_API_KEY = s.tinkerApiKey;
  process.env.AGL_TRAINER_TOKEN = s.tinkerApiKey;
  process.env.AGL_STORE_TOKEN = s.storeToken;
  process.env.AGL_PROXY_ADMIN_TOKEN = s.proxyAdminToken;
}

export async function startSecureStack(prefix: string, secrets: Secrets, opts: { runners?: number; agent?: string } = {}): Promise<{ stack: Stack; dataDir: string; taskQueue: string }> {
  exportSecrets(secrets);
  return startTestStack(prefix, opts);
}
