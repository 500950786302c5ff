// Access rules shared by the services: which bind addresses count as local, and constant-time token checks.
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

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

/** A service reachable from the network without a token: say so loudly (the store and trainer still start). */
export function warnIfOpen(name: string, host: string, token: string | undefined, tokenEnv: string): void {
  if (token || isLoopbackHost(host)) return;
  process.stderr.write(`${name}: WARNING: listening on ${host} (not a loopback address) without ${tokenEnv}: anyone who can reach it has full access; set ${tokenEnv}\n`);
}
