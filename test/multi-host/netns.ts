// A small network of hosts made of Linux network namespaces (needs root): one namespace per host, each with one
// veth link `eth0` to a bridge that lives in a namespace of its own (the switch), addresses from a private /24 that
// exist only inside these namespaces, and no route anywhere else. Nothing is added to the caller's namespace, so
// traffic stays between the hosts. A host's link is cut and restored on the switch side.
import { execFileSync, spawnSync } from 'node:child_process';

export interface Network {
  /** The namespace of `host`. */
  ns(host: string): string;
  /** The address of `host` on the bridge. */
  addr(host: string): string;
  linkDown(host: string): void;
  linkUp(host: string): void;
  /** Pids of every process in `host`'s namespace. */
  pids(host: string): number[];
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** Why namespaces cannot be made here (not root, no `ip`), or null. */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const r = spawnSync('ip', ['netns', 'list'], { stdio: 'ignore' });
  return r.status === 0 ? null : 'the `ip` command (iproute2) is missing';
}

/** Namespaces `<prefix>-<host>` and `<prefix>-sw` with hosts at `<subnet>.1`, `.2`, … in the order given. */
export function createNetwork(prefix: string, hosts: string[], subnet = '10.199.22'): Network {
  const sw = `${prefix}-sw`;
  const ns = (h: string) => `${prefix}-${h}`;
  const port = (h: string) => `p-${h}`.slice(0, 15);
  const addrs = new Map(hosts.map((h, i) => [h, `${subnet}.${i + 1}`]));
  const made: string[] = [];
  const destroy = () => {
    for (const n of made.reverse()) {
      for (const pid of pidsIn(n)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      spawnSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
    }
  };
  try {
    ip('netns', 'add', sw);
    made.push(sw);
    ip('-n', sw, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', sw, 'link', 'set', 'br0', 'up');
    for (const h of hosts) {
      ip('netns', 'add', ns(h));
      made.push(ns(h));
      ip('-n', ns(h), 'link', 'set', 'lo', 'up');
      // Made inside the switch, its peer moved straight into the host: never an interface in our namespace.
      ip('-n', sw, 'link', 'add', port(h), 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns(h));
      ip('-n', sw, 'link', 'set', port(h), 'master', 'br0');
      ip('-n', sw, 'link', 'set', port(h), 'up');
      ip('-n', ns(h), 'addr', 'add', `${addrs.get(h)}/24`, 'dev', 'eth0');
      ip('-n', ns(h), 'link', 'set', 'eth0', 'up');
    }
  } catch (err) {
    destroy();
    throw err;
  }
  return {
    ns,
    addr: (h) => addrs.get(h) ?? (() => { throw new Error(`no host ${h}`); })(),
    linkDown: (h) => void ip('-n', sw, 'link', 'set', port(h), 'down'),
    linkUp: (h) => void ip('-n', sw, 'link', 'set', port(h), 'up'),
    pids: (h) => pidsIn(ns(h)),
    destroy,
  };
}

function pidsIn(n: string): number[] {
  const r = spawnSync('ip', ['netns', 'pids', n], { encoding: 'utf8' });
  return (r.stdout ?? '').split(/\s+/).filter(Boolean).map(Number);
}

/** Namespaces a killed earlier run of this test left (`<stem>-…`): removed with their processes. */
export function removeStale(stem: string): void {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  for (const line of (r.stdout ?? '').split('\n')) {
    const n = line.split(' ')[0];
    if (!n || !n.startsWith(`${stem}-`)) continue;
    for (const pid of pidsIn(n)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    spawnSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
  }
}
