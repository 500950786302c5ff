// Keeps a set of child processes running the way a service manager would: one that dies is started again
// (with a growing pause, reset after it has stayed up a while), until the supervisor stops it on purpose.
import { startProcess, type ManagedProcess, type StartOptions } from '../common/processes';

export interface ServiceSpec extends StartOptions {
  /** Called with the ready-line match after each (re)start. */
  onReady?: (match: RegExpMatchArray | undefined) => void;
}

export class Supervised {
  private current: ManagedProcess | undefined;
  private stopping = false;
  /** While the service is down: a promise settled when it is back. */
  private down: { back: Promise<void>; markBack: () => void } | undefined;
  restarts = 0;

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
    void proc.exited.then(async (code) => {
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
