// Access rules shared by the services: which bind addresses count as local, and constant-time token checks.
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { UsageError } from './service-args';

/** True for addresses only this machine can reach: localhost, 127.0.0.0/8, ::1 (and ::ffff:127.x). */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^(0:){7}1$/.test(h) || /^::ffff:127\./.test(h);
  return false;
}

/** Compares a presented secret with the expected one without leaking where they differ through timing. */
export function sameSecret(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The environment variable and flag that say "only trusted hosts reach this network": a service may then run open. */
export const TRUSTED_NETWORK_ENV = 'AGL_TRUSTED_NETWORK';
export const TRUSTED_NETWORK_FLAG = '--trusted-network';

/** True when AGL_TRUSTED_NETWORK is set to 1/true/yes. */
export function trustedNetworkFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes)$/i.test(env[TRUSTED_NETWORK_ENV] ?? '');
}

/**
 * A service bound beyond loopback without its token would give anyone who reaches it full access: refused (the
 * error names the token and the explicit way out), unless told the network is trusted, then started with a warning.
 */
export function requireTokenOrTrusted(name: string, host: string, token: string | undefined, tokenEnv: string, trusted: boolean): void {
  if (token || isLoopbackHost(host)) return;
  if (!trusted) {
    throw new UsageError(
      `${name}: refusing to listen on ${host} (not a loopback address) without ${tokenEnv}: anyone who can reach it would have full access. ` +
        `Set ${tokenEnv} (and give it to every client), or, if only trusted hosts can reach this network, say so with ${TRUSTED_NETWORK_FLAG} or ${TRUSTED_NETWORK_ENV}=1`,
    );
  }
  process.stderr.write(`${name}: WARNING: listening on ${host} (not a loopback address) without ${tokenEnv}, as ${TRUSTED_NETWORK_ENV}/${TRUSTED_NETWORK_FLAG} allows: anyone who can reach it has full access\n`);
}
