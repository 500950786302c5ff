// A Tinker session: client/config (required by the service before anything else), create_session, then a
// heartbeat every ~10 s. The heartbeat timer is unref'd so it never keeps a process alive.
import { SDK_VERSION, type ResolvedOptions } from './config';
import type { TinkerHttp } from './http';

export class Session {
  private timer: NodeJS.Timeout | undefined;
  private failingSince: number | undefined;
  private modelSeq = 0;
  private samplingSeq = 0;

  private constructor(
    private readonly http: TinkerHttp,
    readonly id: string,
    private readonly opts: ResolvedOptions,
  ) {}

  static async create(http: TinkerHttp, opts: ResolvedOptions): Promise<Session> {
    await http.postJson('/client/config', { sdk_version: SDK_VERSION });
    const res = await http.postJson<{ session_id: string }>('/create_session', {
      tags: opts.tags,
      user_metadata: opts.userMetadata,
      sdk_version: SDK_VERSION,
      type: 'create_session',
    });
    if (typeof res.session_id !== 'string') throw new Error('create_session answered without a session_id');
    const session = new Session(http, res.session_id, opts);
    session.startHeartbeat();
    return session;
  }

  nextModelSeqId(): number {
    return this.modelSeq++;
  }

  nextSamplingSeqId(): number {
    return this.samplingSeq++;
  }

  private startHeartbeat(): void {
    const beat = async () => {
      try {
        await this.http.call({
          method: 'POST',
          path: '/session_heartbeat',
          body: { session_id: this.id, type: 'session_heartbeat' },
          timeoutMs: Math.max(1000, this.opts.heartbeatMs),
          retry: false,
        });
        this.failingSince = undefined;
      } catch (err) {
        this.failingSince ??= Date.now();
        // Like the SDK: only complain once heartbeats have failed for two minutes.
        if (Date.now() - this.failingSince > 120_000) this.opts.log(`tinker: session heartbeat failing: ${(err as Error).message}`);
      }
      if (this.timer) this.timer = setTimeout(() => void beat(), this.opts.heartbeatMs).unref();
    };
    this.timer = setTimeout(() => void beat(), this.opts.heartbeatMs).unref();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
