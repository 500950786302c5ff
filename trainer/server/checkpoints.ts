// Where the trainer keeps what must survive a restart, under its data dir:
//   runs/<model_id>/run.json                        base model, LoRA rank, seed
//   runs/<model_id>/weights/<name>/                 weights + optimizer state (save_weights)
//   runs/<model_id>/sampler_weights/<name>/         frozen sampler weights (save_weights_for_sampler)
//   sampling-sessions.jsonl                         sampling sessions backed by a path or a base model
// Checkpoint URIs are tinker://<model_id>/<weights|sampler_weights>/<name> (§A.3). A checkpoint saved with a TTL
// (ttl_seconds, or PUT …/ttl later) keeps its expiry in checkpoint.json: past it, it counts as gone and the
// trainer's sweeper deletes it.
import { quote } from '../../common/front-door';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RequestError } from './futures';
import { trainerNow } from './clock';

export type CheckpointKind = 'weights' | 'sampler_weights';

export interface TinkerPath {
  modelId: string;
  kind: CheckpointKind;
  name: string;
}

export interface RunInfo {
  modelId: string;
  baseModel: string;
  loraRank: number;
  seed: number;
  createdAt: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9:._-]{0,255}$/;

export function checkName(name: string): string {
  if (!NAME.test(name)) throw new RequestError(`checkpoint name ${quote(name)} must match ${NAME}`);
  return name;
}

export function formatTinkerPath(p: TinkerPath): string {
  return `tinker://${p.modelId}/${p.kind}/${p.name}`;
}

export function parseTinkerPath(uri: unknown): TinkerPath {
  if (typeof uri !== 'string' || !uri.startsWith('tinker://')) throw new RequestError(`path must be a tinker:// URI, got ${quote(uri)}`);
  const parts = uri.slice('tinker://'.length).split('/');
  if (parts.length !== 3 || (parts[1] !== 'weights' && parts[1] !== 'sampler_weights') || !MODEL_ID.test(parts[0])) {
    throw new RequestError(`path ${quote(uri)} must look like tinker://<model_id>/<weights|sampler_weights>/<name>`);
  }
  return { modelId: parts[0], kind: parts[1], name: checkName(parts[2]) };
}

export class CheckpointStore {
  private readonly sessionsFile: string;
  private sessionsFileQueue: Promise<void> = Promise.resolve();
  /** Expiry (ms) of each checkpoint saved or set with one, by tinker:// path, so a sweep reads only what is due: an
   *  hour into a fast run, reading every checkpoint file would be 13,000 files a minute (seconds of work, and native
   *  memory that grows with them). Filled from disk on the first sweep (an earlier life's checkpoints), then by save, setTtl and
   *  remove; a sweep checks each due entry against its file, which stays the truth. */
  private readonly expiries = new Map<string, number>();
  private expiriesLoaded?: Promise<void>;

  constructor(readonly dataDir: string) {
    this.sessionsFile = path.join(dataDir, 'sampling-sessions.jsonl');
  }

  runDir(modelId: string): string {
    if (!MODEL_ID.test(modelId)) throw new RequestError(`bad model_id ${quote(modelId)}`);
    return path.join(this.dataDir, 'runs', modelId);
  }

  dir(p: TinkerPath): string {
    return path.join(this.runDir(p.modelId), p.kind, checkName(p.name));
  }

  exists(p: TinkerPath, now = trainerNow()): boolean {
    const at = this.expiryOnDisk(p);
    return at !== undefined && (at === null || at > now);
  }

  /** Sets the expiry `ttlSeconds` from now, or removes it (null). */
  async setTtl(p: TinkerPath, ttlSeconds: number | null): Promise<void> {
    const meta = await this.readMeta(p);
    if (ttlSeconds === null) delete meta.expires_at;
    else meta.expires_at = new Date(trainerNow() + ttlSeconds * 1000).toISOString();
    const file = path.join(this.dir(p), 'checkpoint.json');
    await writeFile(`${file}.tmp`, JSON.stringify(meta));
    await rename(`${file}.tmp`, file);
    this.noteExpiry(p, meta);
  }

  /** Deletes every checkpoint past its expiry; returns their paths. */
  async sweepExpired(now = trainerNow()): Promise<string[]> {
    // A scan that failed part-way (a checkpoint removed under it) is tried again at the next sweep.
    await (this.expiriesLoaded ??= this.loadExpiries().catch(() => void (this.expiriesLoaded = undefined)));
    const gone: string[] = [];
    // A Map may change while it is iterated (entries set or deleted meanwhile are seen or skipped, never twice).
    for (const [uri, at] of this.expiries) {
      if (at > now) continue;
      const p = parseTinkerPath(uri);
      const onDisk = this.expiryOnDisk(p);
      if (onDisk === undefined || onDisk === null) {
        this.expiries.delete(uri); // removed, or kept for good, since this entry was written
        continue;
      }
      if (onDisk > now) {
        this.expiries.set(uri, onDisk); // given more time
        continue;
      }
      await this.remove(p);
      gone.push(uri);
    }
    return gone;
  }

  /** Every checkpoint on disk with an expiry, read once: what an earlier life of the trainer saved. */
  private async loadExpiries(): Promise<void> {
    let runs: string[] = [];
    try {
      runs = await readdir(path.join(this.dataDir, 'runs'));
    } catch {
      return;
    }
    for (const modelId of runs) {
      if (!MODEL_ID.test(modelId)) continue;
      for (const { path: p, meta } of await this.list(modelId, true)) {
        if (!this.expiries.has(formatTinkerPath(p))) this.noteExpiry(p, meta);
      }
    }
  }

  private noteExpiry(p: TinkerPath, meta: Record<string, unknown>): void {
    const at = typeof meta.expires_at === 'string' ? Date.parse(meta.expires_at) : NaN;
    if (Number.isNaN(at)) this.expiries.delete(formatTinkerPath(p));
    else this.expiries.set(formatTinkerPath(p), at);
  }

  /** The expiry in a checkpoint's file: ms, null when it has none, undefined when the checkpoint is gone (or going). */
  private expiryOnDisk(p: TinkerPath): number | null | undefined {
    try {
      const meta = JSON.parse(readFileSync(path.join(this.dir(p), 'checkpoint.json'), 'utf8')) as Record<string, unknown>;
      const at = typeof meta.expires_at === 'string' ? Date.parse(meta.expires_at) : NaN;
      return Number.isNaN(at) ? null : at; // an unreadable date never expires, as expired() reads it
    } catch {
      return undefined;
    }
  }

  /** Fails with a user error when the checkpoint is missing. */
  requireExisting(p: TinkerPath): string {
    if (!this.exists(p)) throw new RequestError(`checkpoint ${formatTinkerPath(p)} does not exist`, 404);
    return this.dir(p);
  }

  async writeRun(info: RunInfo): Promise<void> {
    const dir = this.runDir(info.modelId);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'run.json'), JSON.stringify(info));
  }

  async readRun(modelId: string): Promise<RunInfo | undefined> {
    try {
      return JSON.parse(await readFile(path.join(this.runDir(modelId), 'run.json'), 'utf8')) as RunInfo;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes into a temporary directory, then renames it into place, so a crash never leaves half a checkpoint (nor
   * does a failed write: the temporary directory goes). checkpoint.json keeps the sha256 of every file written, which
   * each load checks (requireIntact).
   */
  async save(p: TinkerPath, overwrite: boolean, write: (dir: string) => Promise<void>, meta: Record<string, unknown> = {}): Promise<string> {
    const final = this.dir(p);
    if (this.exists(p) && !overwrite) {
      throw new RequestError(`checkpoint ${formatTinkerPath(p)} already exists (pass overwrite to replace it)`, 409);
    }
    const tmp = `${final}.tmp-${process.pid}-${Date.now()}`;
    try {
      await mkdir(tmp, { recursive: true });
      await write(tmp);
      const files = await checksums(tmp);
      await writeFile(path.join(tmp, 'checkpoint.json'), JSON.stringify({ ...meta, path: formatTinkerPath(p), time: new Date().toISOString(), files }));
      await rm(final, { recursive: true, force: true });
      await rename(tmp, final);
    } catch (err) {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      throw namingPath(err, final);
    }
    this.noteExpiry(p, meta);
    return formatTinkerPath(p);
  }

  /**
   * The directory of a checkpoint whose files are as they were saved; a missing one is a 404, a damaged one (a file
   * changed, missing or unreadable since, or an unreadable checkpoint.json) a 422 that names it, so it is never loaded.
   * Checkpoints saved before checksums were kept are loaded as before (their engine checks its weights' hash).
   */
  async requireIntact(p: TinkerPath): Promise<string> {
    const dir = this.dir(p);
    const damaged = (why: string) => new RequestError(`checkpoint ${formatTinkerPath(p)} is damaged: ${why}; it was not loaded (load an earlier checkpoint, or save this one again)`, 422);
    let meta: Record<string, unknown>;
    try {
      meta = JSON.parse(await readFile(path.join(dir, 'checkpoint.json'), 'utf8')) as Record<string, unknown>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.requireExisting(p);
      throw damaged('its checkpoint.json cannot be read');
    }
    if (expired(meta, trainerNow())) return this.requireExisting(p);
    const files = meta.files;
    if (!files || typeof files !== 'object') return dir;
    for (const [name, sum] of Object.entries(files as Record<string, unknown>)) {
      const actual = await sha256File(path.join(dir, name)).catch(() => null);
      if (actual === null) throw damaged(`${name} is missing or unreadable`);
      if (actual !== sum) throw damaged(`${name} does not match the checksum it was saved with`);
    }
    return dir;
  }

  async readMeta(p: TinkerPath): Promise<Record<string, unknown>> {
    return JSON.parse(await readFile(path.join(this.requireExisting(p), 'checkpoint.json'), 'utf8')) as Record<string, unknown>;
  }

  /** Every complete checkpoint of a run (half-written temporaries are skipped; expired ones too unless asked). */
  async list(modelId: string, withExpired = false): Promise<{ path: TinkerPath; meta: Record<string, unknown> }[]> {
    const out: { path: TinkerPath; meta: Record<string, unknown> }[] = [];
    for (const kind of ['weights', 'sampler_weights'] as const) {
      let names: string[] = [];
      try {
        names = await readdir(path.join(this.runDir(modelId), kind));
      } catch {
        continue;
      }
      for (const name of names.sort()) {
        if (!NAME.test(name) || name.includes('.tmp-')) continue;
        const p: TinkerPath = { modelId, kind, name };
        const file = path.join(this.dir(p), 'checkpoint.json');
        if (!existsSync(file)) continue;
        const meta = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
        if (withExpired || !expired(meta, trainerNow())) out.push({ path: p, meta });
      }
    }
    return out;
  }

  async remove(p: TinkerPath): Promise<void> {
    await rm(this.dir(p), { recursive: true, force: true });
    this.expiries.delete(formatTinkerPath(p));
  }

  async appendSamplingSession(record: Record<string, unknown>): Promise<void> {
    await this.sessionsFileTurn(async () => {
      await mkdir(this.dataDir, { recursive: true });
      await appendFile(this.sessionsFile, `${JSON.stringify(record)}\n`).catch((err: unknown) => {
        throw namingPath(err, this.sessionsFile);
      });
    });
  }

  /** Rewrites sampling-sessions.jsonl without the sessions on `modelPaths` (checkpoints removed), so it stays bounded. */
  async dropSamplingSessionsOn(modelPaths: ReadonlySet<string>): Promise<void> {
    if (modelPaths.size === 0) return;
    await this.sessionsFileTurn(async () => {
      const all = await this.readSamplingSessions();
      const kept = all.filter((r) => !(typeof r.model_path === 'string' && modelPaths.has(r.model_path)));
      if (kept.length === all.length) return;
      const tmp = `${this.sessionsFile}.tmp`;
      await writeFile(tmp, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
      await rename(tmp, this.sessionsFile);
    });
  }

  /** One append or rewrite of the sessions file at a time: a rewrite must not lose a record appended meanwhile. */
  private sessionsFileTurn(fn: () => Promise<void>): Promise<void> {
    const turn = this.sessionsFileQueue.then(fn);
    this.sessionsFileQueue = turn.catch(() => undefined);
    return turn;
  }

  async readSamplingSessions(): Promise<Record<string, unknown>[]> {
    try {
      const text = await readFile(this.sessionsFile, 'utf8');
      return text
        .split('\n')
        .filter((l) => l.trim())
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Record<string, unknown>];
          } catch {
            return []; // a torn last line after a crash
          }
        });
    } catch {
      return [];
    }
  }
}

function expired(meta: Record<string, unknown>, now: number): boolean {
  return typeof meta.expires_at === 'string' && Date.parse(meta.expires_at) <= now;
}

/** sha256 of every file under `dir` (by path relative to it), streamed. */
async function checksums(dir: string, under = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(path.join(dir, under), { withFileTypes: true })) {
    const rel = under ? `${under}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(out, await checksums(dir, rel));
    else if (entry.isFile()) out[rel] = await sha256File(path.join(dir, rel));
  }
  return out;
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** A file system error that names no file (a write's ENOSPC) names `file`: what failed is said where it is answered. */
function namingPath(err: unknown, file: string): unknown {
  const e = err as NodeJS.ErrnoException | null;
  if (e && typeof e === 'object' && typeof e.code === 'string' && !e.path) e.path = file;
  return err;
}
