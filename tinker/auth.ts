// Credentials, as SDK 0.38 resolves them (lib/_auth_token_provider.py, lib/_jwt_auth.py): the `apiKey` option,
// else TINKER_API_KEY, else the output of TINKER_CREDENTIAL_CMD (run through the shell each time one is needed).
// With the service's `pjwt_auth_enabled` flag the credential is traded for a short-lived JWT (POST /auth/token)
// that is sent instead and refreshed: in the background at 45–55 % of its lifetime, on demand when 60 s or less
// remain, and once when the service rejects it as `invalid_token`. Keys come from the environment only: the
// SDK's stored key (~/.tinker/credentials.json, `tinker auth login`) is not read.
import { exec } from 'node:child_process';
import { decodeJwt } from 'jose';

export class TinkerAuthError extends Error {
  override readonly name = 'TinkerAuthError';
}

export const MISSING_API_KEY_MESSAGE =
  'The api_key client option must be set by passing apiKey to the client, by setting the TINKER_API_KEY environment variable, or TINKER_CREDENTIAL_CMD';

/** Something that yields the X-API-Key value of the next request. */
export interface AuthProvider {
  token(): Promise<string | undefined>;
  /** A token other than `rejected` after a 401 invalid_token, or undefined when there is none to get. */
  replace?(rejected: string): Promise<string | undefined>;
  close?(): void;
}

function claims(jwt: string): { exp?: number; iat?: number } {
  try {
    return decodeJwt(jwt);
  } catch (err) {
    throw new TinkerAuthError(`not a JWT: ${(err as Error).message}`);
  }
}

/** Seconds until a credential expires: its `exp` for a JWT, Infinity for an opaque key. */
export function secondsLeft(credential: string, now = Date.now()): number {
  if (!credential.startsWith('eyJ')) return Infinity;
  const exp = claims(credential).exp;
  return typeof exp === 'number' ? exp - now / 1000 : 0;
}

/** A fixed key (or a JWT given as the key, never refreshed: the SDK refuses it once expired). */
export class ApiKeyAuth implements AuthProvider {
  constructor(readonly key: string) {
    if (!key.startsWith('tml-') && !key.startsWith('eyJ')) throw new TinkerAuthError("The api_key must start with the 'tml-' prefix");
  }
  async token(): Promise<string> {
    if (secondsLeft(this.key) <= 0) {
      throw new TinkerAuthError('The api_key JWT has expired. Pass a fresh one, or remove it and set TINKER_CREDENTIAL_CMD to a command that prints one.');
    }
    return this.key;
  }
}

/** Runs TINKER_CREDENTIAL_CMD for every credential it hands out. */
export class CredentialCmdAuth implements AuthProvider {
  constructor(
    private readonly cmd: string,
    private readonly timeoutMs = 60_000,
  ) {
    if (!cmd) throw new TinkerAuthError('Your organization requires dynamic credentials — set TINKER_CREDENTIAL_CMD to a command that prints a valid credential.');
  }
  token(): Promise<string> {
    return new Promise((resolve, reject) => {
      exec(this.cmd, { timeout: this.timeoutMs, maxBuffer: 1 << 20 }, (err, stdout) => {
        if (err) return reject(new TinkerAuthError(`TINKER_CREDENTIAL_CMD failed: ${err.message}`));
        const credential = stdout.trim();
        if (!credential) return reject(new TinkerAuthError('TINKER_CREDENTIAL_CMD returned an empty credential.'));
        if (secondsLeft(credential) <= 0) return reject(new TinkerAuthError('TINKER_CREDENTIAL_CMD printed an expired JWT.'));
        resolve(credential);
      });
    });
  }
}

/** No credential at all: requests go without X-API-Key (an open local trainer accepts them). */
export class NoAuth implements AuthProvider {
  async token(): Promise<undefined> {
    return undefined;
  }
}

export interface CredentialSources {
  apiKey?: string;
  credentialCmd?: string;
}

/** The SDK's resolve_auth_provider; `enforceCmd` when the service says credential_default_source=credential_cmd. */
export function resolveAuth(src: CredentialSources, enforceCmd: boolean): AuthProvider {
  const key = src.apiKey;
  if (key?.startsWith('eyJ')) return new ApiKeyAuth(key);
  if (enforceCmd) return new CredentialCmdAuth(src.credentialCmd ?? '');
  if (key) {
    try {
      return new ApiKeyAuth(key);
    } catch (err) {
      if (src.credentialCmd) return new CredentialCmdAuth(src.credentialCmd);
      throw err;
    }
  }
  if (src.credentialCmd) return new CredentialCmdAuth(src.credentialCmd);
  return new NoAuth();
}

const REFRESH_ON_DEMAND_S = 60;
const RETRY_DELAY_MS = 60_000;

/** Rejections of the credential itself by /auth/token (401/403): refreshing cannot fix them. */
export type Exchange = () => Promise<string>;

/** The JWT of JWT mode: fetched on first use, refreshed before it runs out. */
export class JwtAuth implements AuthProvider {
  private jwt = '';
  private pending: Promise<string> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly exchange: Exchange,
    private readonly isRejection: (err: unknown) => boolean,
    private readonly log: (line: string) => void,
  ) {}

  async token(): Promise<string> {
    if (this.jwt && secondsLeft(this.jwt) > REFRESH_ON_DEMAND_S) return this.jwt;
    try {
      return await this.fetchOnce();
    } catch (err) {
      if (this.isRejection(err) || !this.jwt || secondsLeft(this.jwt) <= 0) throw err;
      this.log(`tinker: on-demand JWT refresh failed, using the cached one: ${(err as Error).message}`);
      return this.jwt;
    }
  }

  async replace(rejected: string): Promise<string> {
    if (this.jwt !== rejected) return this.jwt;
    return this.fetchOnce();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One exchange at a time: concurrent callers share it. */
  private fetchOnce(): Promise<string> {
    this.pending ??= this.exchange()
      .then((jwt) => {
        claims(jwt);
        this.jwt = jwt;
        this.schedule(refreshDelayMs(jwt));
        return jwt;
      })
      .finally(() => (this.pending = undefined));
    return this.pending;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), ms).unref();
  }

  private async refresh(): Promise<void> {
    try {
      await this.fetchOnce();
    } catch (err) {
      // A rejected credential is retried only until token() takes over near expiry.
      if (this.isRejection(err) && secondsLeft(this.jwt) - RETRY_DELAY_MS / 1000 <= REFRESH_ON_DEMAND_S) {
        this.log(`tinker: JWT refresh rejected, stopping background refresh: ${(err as Error).message}`);
        return;
      }
      this.log(`tinker: JWT refresh failed, retrying in ${RETRY_DELAY_MS / 1000} s: ${(err as Error).message}`);
      this.schedule(RETRY_DELAY_MS);
    }
  }
}

/** Half the token's lifetime (exp - iat), +-10 %; 60 s when the claims are missing. */
export function refreshDelayMs(jwt: string, random = Math.random): number {
  const { exp, iat } = claims(jwt);
  if (typeof exp !== 'number' || typeof iat !== 'number' || exp <= iat) return RETRY_DELAY_MS;
  return (exp - iat) * (0.45 + 0.1 * random()) * 1000;
}
