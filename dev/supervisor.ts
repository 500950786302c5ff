// Keeps a set of child processes running the way a service manager would: one that dies is started again
// (with a growing pause, reset after it has stayed up a while), until the supervisor stops it on purpose; one
// that stops answering (hung or frozen: liveness.ts) is killed and started again the same way.
import { startProcess, type ManagedProcess, type StartOptions } from '../common/processes';
import { defaultLiveness, watchLiveness, type LivenessOptions } from './liveness';

export interface ServiceSpec extends StartOptions {
  /** Called with the ready-line match after each (re)start. */
  onReady?: (match: RegExpMatchArray | undefined) => void;
  /**
   * How its life is checked (liveness.ts); default: every 2 s, its ready line's http:// URL asked (else whether
   * it is stopped), dead after AGL_LIVENESS_DEAD_S (30) s. false: not checked.
   */
  liveness?: Omit<LivenessOptions, 'url'> | false;
  /** The address liveness asks when the ready line carries none (SkyRL: ready when its engine is, not its HTTP server). */
  healthUrl?: string;
}

export class Supervised {
  private current: ManagedProcess | undefined;
  private stopping = false;
  /** While the service is down: a promise settled when it is back. */
  private down: { back: Promise<void>; markBack: () => void } | undefined;
  restarts = 0;
  /** Restarts because the process stopped answering (counted in `restarts` too). */
  hangs = 0;

  constructor(
    readonly spec: ServiceSpec,
    private readonly log: (line: string) => void,
  ) {}

  get process(): ManagedProcess | undefined {
    return this.current;
  }

  async start(): Promise<this> {
    await this.launch();
    return this;
  }

  /** Resolves once the service answers again (at once when it is up). */
  whenUp(): Promise<void> {
    return this.down?.back ?? Promise.resolve();
  }

  private markDown(): void {
    if (this.down) return;
    let markBack = () => undefined as void;
    const back = new Promise<void>((resolve) => (markBack = resolve));
    this.down = { back, markBack };
  }

  private async launch(): Promise<void> {
    this.current = await startProcess(this.spec);
    this.spec.onReady?.(this.current.match);
    this.down?.markBack();
    this.down = undefined;
    const startedAt = Date.now();
    const proc = this.current;
    const stopWatching = this.watch(proc);
    void proc.exited.then(async (code) => {
      stopWatching();
      // What the process left behind in its group dies with it (SkyRL's engine outlives a killed API server, and
      // two engines would then serve one database). The group's id is not reused while members remain.
      proc.kill9();
      if (this.stopping || this.current !== proc) return;
      this.markDown();
      this.restarts++;
      const upMs = Date.now() - startedAt;
      const pauseMs = upMs > 30_000 ? 500 : Math.min(10_000, 500 * 2 ** Math.min(this.restarts, 5));
      this.log(`${this.spec.name} exited (code ${code}); restarting in ${(pauseMs / 1000).toFixed(1)} s`);
      await new Promise((r) => setTimeout(r, pauseMs));
      while (!this.stopping) {
        try {
          await this.launch();
          this.log(`${this.spec.name} is back`);
          return;
        } catch (err) {
          this.log(`${this.spec.name} failed to restart: ${(err as Error).message.split('\n')[0]}; trying again`);
          await new Promise((r) => setTimeout(r, 2000));
        }
      }
    });
  }

  /** Kills the process once it shows no life (it never exits by itself); the exit handler starts it again. */
  private watch(proc: ManagedProcess): () => void {
    if (this.spec.liveness === false) return () => undefined;
    const url = this.spec.healthUrl ?? (proc.match?.[1]?.startsWith('http') ? proc.match[1] : undefined);
    const o = { ...defaultLiveness(url), ...this.spec.liveness };
    return watchLiveness(proc.pid, o, (why) => {
      if (this.stopping || this.current !== proc) return;
      this.hangs++;
      this.log(`${this.spec.name} ${why}: killing it to start it again`);
      this.markDown();
      proc.kill9();
    });
  }

  /** Kills the process as a crash would; the supervisor brings it back. */
  crash(): void {
    this.markDown();
    this.current?.kill9();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.current?.stop();
  }
}
