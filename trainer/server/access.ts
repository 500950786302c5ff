// Who may call the local trainer, and the client/config flags it hands out. Two modes:
//  - key mode (default): with a token set, every request but healthz needs `Authorization: Bearer <token>` or
//    `X-API-Key: <token>`;
//  - JWT mode (a test mode of hosted Tinker's `pjwt_auth_enabled`): client/config says so, POST /auth/token
//    trades the credential (the token, or any `tml-` key when none is set) for an HS256 JWT that lives
//    `jwtLifetimeSeconds`, and every other request must carry a live JWT in X-API-Key; a missing, forged or
//    expired one is answered 401 with `WWW-Authenticate: Bearer error="invalid_token"`, which makes the SDK
//    exchange its credential again and replay the request once.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { SignJWT, jwtVerify } from 'jose';
import { sameSecret } from '../../common/access';
import { RequestError } from './futures';

export class AuthError extends RequestError {
  constructor(
    message: string,
    readonly invalidToken = false,
  ) {
    super(message, 401);
  }
}

export interface AccessOptions {
  token?: string;
  /** JWT mode when set: the lifetime of each JWT handed out. */
  jwtLifetimeSeconds?: number;
  /** Extra client/config flags (e.g. proto_compress_fwdbwd, fwdbwd_max_chunk_len, credential_default_source). */
  clientFlags?: Record<string, unknown>;
}

const OPEN_PATHS = new Set(['/healthz']);
/** Reached with the raw credential in JWT mode (the SDK fetches its flags before it has a JWT). */
const CREDENTIAL_PATHS = new Set(['/client/config', '/auth/token']);

export class Access {
  private readonly secret = randomBytes(32);
  /** JWTs handed out, for tests. */
  issued = 0;

  constructor(private readonly opts: AccessOptions) {
    const life = opts.jwtLifetimeSeconds;
    if (life !== undefined && (!Number.isInteger(life) || life < 1)) throw new Error(`jwtLifetimeSeconds must be a positive whole number, got ${life}`);
  }

  get jwtMode(): boolean {
    return this.opts.jwtLifetimeSeconds !== undefined;
  }

  clientConfig(): Record<string, unknown> {
    return {
      pjwt_auth_enabled: this.jwtMode,
      credential_default_source: 'api_key',
      use_pyqwest_transport: false,
      parallel_fwdbwd_chunks: false,
      proto_write_fwdbwd: false,
      proto_compress_fwdbwd: false,
      create_model_via_load_weights: false,
      sample_use_retrieve_futures: false,
      sample_join_sampling_session: false,
      custom_loss_server_side: false,
      ...this.opts.clientFlags,
    };
  }

  /** Throws AuthError unless the request may go on. */
  async check(path: string, req: IncomingMessage): Promise<void> {
    if (OPEN_PATHS.has(path)) return;
    const key = typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : undefined;
    if (!this.jwtMode || CREDENTIAL_PATHS.has(path)) return this.checkCredential(key, req.headers.authorization);
    if (!key) throw new AuthError('missing JWT in X-API-Key (this trainer runs in JWT mode: POST /auth/token first)', true);
    try {
      await jwtVerify(key, this.secret, { algorithms: ['HS256'] });
    } catch (err) {
      throw new AuthError(`invalid or expired JWT: ${(err as Error).message}`, true);
    }
  }

  private checkCredential(key: string | undefined, authorization: string | undefined): void {
    const token = this.opts.token;
    if (token) {
      if (sameSecret(authorization, `Bearer ${token}`) || (key !== undefined && sameSecret(key, token))) return;
      throw new AuthError('missing or wrong API token (Authorization: Bearer or X-API-Key)');
    }
    if (this.jwtMode && !key?.startsWith('tml-')) throw new AuthError("JWT mode: /auth/token needs a credential starting with 'tml-' in X-API-Key");
  }

  /** POST /auth/token. */
  async mint(): Promise<{ jwt: string }> {
    if (!this.jwtMode) throw new RequestError('this trainer does not hand out JWTs (client/config says pjwt_auth_enabled=false)', 404);
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({ sub: 'local-trainer', jti: randomBytes(8).toString('hex') })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(now)
      .setExpirationTime(now + this.opts.jwtLifetimeSeconds!)
      .sign(this.secret);
    this.issued++;
    return { jwt };
  }
}
