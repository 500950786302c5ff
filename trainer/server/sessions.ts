// Sessions of the local trainer: create_session (tags, project, display name kept), heartbeats, and
// POST /sessions/{id}/finish as the hosted service has it: the first finish reason wins, and a finished
// session's heartbeat, new models and new sampling sessions are answered 410, so SDK 0.38 stops heartbeating.
// Sessions of an earlier life of this trainer are adopted by their first heartbeat.
import { quote } from '../../common/front-door';
import { randomUUID } from 'node:crypto';
import { RequestError } from './futures';
import { optString, reqString, type Body } from './validate';

const FINISH_STATUSES = ['success', 'errored', 'interrupted'];

interface SessionState {
  createdAt: number;
  lastHeartbeat: number;
  tags: string[];
  projectId?: string;
  displayName?: string;
  finished?: { status: string; detail: string | null; at: string };
}

export class Sessions {
  private readonly sessions = new Map<string, SessionState>();

  create(b: Body) {
    const tags = Array.isArray(b.tags) ? b.tags.filter((t): t is string => typeof t === 'string') : [];
    const id = `s-${randomUUID()}`;
    this.sessions.set(id, { createdAt: Date.now(), lastHeartbeat: Date.now(), tags, projectId: optString(b, 'project_id'), displayName: optString(b, 'display_name') });
    return { session_id: id, type: 'create_session' };
  }

  heartbeat(b: Body) {
    const id = reqString(b, 'session_id');
    const s = this.sessions.get(id);
    if (s?.finished) throw new RequestError(`session ${id} has finished (${s.finished.status})`, 410);
    if (s) s.lastHeartbeat = Date.now();
    else this.sessions.set(id, { createdAt: Date.now(), lastHeartbeat: Date.now(), tags: [] });
    return { type: 'session_heartbeat' };
  }

  /** 410 when the session finished: nothing new may start in it. */
  requireOpen(id: string): void {
    const s = this.sessions.get(id);
    if (s?.finished) throw new RequestError(`session ${id} has finished (${s.finished.status}); start a new session`, 410);
  }

  finish(id: string, b: Body) {
    const reason = b.reason as Body | undefined;
    const status = reason && typeof reason === 'object' ? reason.type : undefined;
    if (typeof status !== 'string' || !FINISH_STATUSES.includes(status)) {
      throw new RequestError(`reason.type must be one of ${FINISH_STATUSES.join(', ')}, got ${quote(status)}`);
    }
    const detail = b.detail === undefined || b.detail === null ? null : String(b.detail);
    const s = this.sessions.get(id) ?? { createdAt: Date.now(), lastHeartbeat: Date.now(), tags: [] };
    s.finished ??= { status, detail, at: new Date().toISOString() }; // first reason wins
    this.sessions.set(id, s);
    return {};
  }

  get(id: string): Readonly<SessionState> | undefined {
    return this.sessions.get(id);
  }

  /** Sessions silent for longer than `ttlMs` are forgotten (a finished one answers 410 until then); returns their ids. */
  expire(ttlMs: number, now = Date.now()): string[] {
    const gone: string[] = [];
    for (const [id, s] of this.sessions) {
      if (now - s.lastHeartbeat <= ttlMs) continue;
      this.sessions.delete(id);
      gone.push(id);
    }
    return gone;
  }
}
