// Which proxy a runner's next attempt talks to, when the runner is given several (`--proxy A,B` / AGL_PROXY_URLS).
// Any proxy serves any rollout (the rollout's policy travels in its resources and is read from the store), so the
// choice only spreads load and steps around a proxy that just failed: round robin, skipping for `coolOffMs` a proxy
// an attempt failed on. When every proxy failed recently, the least recently failed is tried again.

export class ProxyChoice {
  private next = 0;
  private readonly failedAt = new Map<string, number>();
  private readonly answeredAt = new Map<string, number>();

  constructor(readonly urls: readonly string[], private readonly coolOffMs = 30_000, private readonly now = () => Date.now()) {
    if (urls.length === 0) throw new Error('ProxyChoice needs at least one proxy URL');
  }

  /** The proxy for the next attempt. */
  pick(): string {
    const t = this.now();
    for (let i = 0; i < this.urls.length; i++) {
      const url = this.urls[(this.next + i) % this.urls.length]!;
      const failed = this.failedAt.get(url);
      if (failed === undefined || t - failed >= this.coolOffMs) {
        this.next = (this.next + i + 1) % this.urls.length;
        return url;
      }
    }
    // All cooling off: the one that failed longest ago.
    return [...this.urls].sort((a, b) => this.failedAt.get(a)! - this.failedAt.get(b)!)[0]!;
  }

  /**
   * The next proxy that answers its health check (one that answered in the last 5 s is not asked again); one that
   * does not answer is left out for a while. When none answers, the round robin's pick.
   */
  async pickAnswering(answers: (url: string) => Promise<boolean> = (u) => proxyAnswers(u, 2000)): Promise<string> {
    let first: string | undefined;
    for (let i = 0; i < this.urls.length; i++) {
      const url = this.pick();
      first ??= url;
      const seen = this.answeredAt.get(url);
      if (seen !== undefined && this.now() - seen < 5000) return url;
      if (await answers(url)) {
        this.answeredAt.set(url, this.now());
        return url;
      }
      this.failed(url);
    }
    return first!;
  }

  /** An attempt through `url` failed: leave it out for a while. */
  failed(url: string): void {
    this.failedAt.set(url, this.now());
    this.answeredAt.delete(url);
  }

  succeeded(url: string): void {
    this.failedAt.delete(url);
  }
}

/** `--proxy` / AGL_PROXY_URLS: comma-separated http(s) URLs; a clear error names a bad one. */
export function parseProxyUrls(text: string): string[] {
  const urls = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const u of urls) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(u).protocol);
    } catch {
      /* reported below */
    }
    if (!ok) throw new Error(`proxy URL ${JSON.stringify(u)} is not an http(s) URL`);
  }
  if (urls.length === 0) throw new Error('no proxy URL given');
  return urls.map((u) => u.replace(/\/+$/, ''));
}

/** Whether the proxy at `url` answers GET /health within `timeoutMs`. */
export async function proxyAnswers(url: string, timeoutMs = 3000): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Watches the proxy an attempt talks to: when it misses `misses` health checks in a row (its host lost or cut off:
 * calls to it would hang until their own long deadline), `onLost` is called once, so the attempt fails now and is
 * retried through another proxy. Returns the function that stops watching.
 */
export function watchProxy(url: string, onLost: (why: string) => void, everyMs = 3000, misses = 2): () => void {
  let missed = 0;
  let busy = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    void proxyAnswers(url, everyMs).then((ok) => {
      busy = false;
      if (stopped) return;
      missed = ok ? 0 : missed + 1;
      if (missed >= misses) {
        stopped = true;
        clearInterval(timer);
        onLost(`proxy ${url} missed ${misses} health checks`);
      }
    });
  }, everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
