// Which proxy a runner's next attempt talks to, when the runner is given several (`--proxy A,B` / AGL_PROXY_URLS).
// Any proxy serves any rollout (the rollout's policy travels in its resources and is read from the store), so the
// choice only spreads load and steps around a proxy that just failed: round robin, skipping for `coolOffMs` a proxy
// an attempt failed on. When every proxy failed recently, the least recently failed is tried again.

export class ProxyChoice {
  private next = 0;
  private readonly failedAt = new Map<string, number>();

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

  /** An attempt through `url` failed: leave it out for a while. */
  failed(url: string): void {
    this.failedAt.set(url, this.now());
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
