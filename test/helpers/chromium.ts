// Headless Chromium for the report test: Debian's `chromium`, installed with apt-get when missing (as root).
// When it cannot be had, the error says why and what to install; the test fails rather than skipping.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome'];

async function which(name: string): Promise<string | null> {
  try {
    return (await run('sh', ['-c', `command -v ${name}`])).stdout.trim() || null;
  } catch {
    return null;
  }
}

export async function ensureChromium(): Promise<string> {
  if (process.env.CHROMIUM && existsSync(process.env.CHROMIUM)) return process.env.CHROMIUM;
  for (const c of CANDIDATES) {
    const found = await which(c);
    if (found) return found;
  }
  const how = 'install Debian\'s chromium package (apt-get install chromium) or set CHROMIUM to a Chromium binary';
  if (process.getuid?.() !== 0) throw new Error(`headless Chromium is needed to test the report and is not installed; not root, so the test cannot install it: ${how}`);
  process.stderr.write('[chromium] not found: apt-get install chromium (once; a few minutes)\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const opts = { env, maxBuffer: 64 << 20, timeout: 15 * 60_000 };
  try {
    await run('apt-get', ['update'], opts);
    await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], opts);
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`headless Chromium is needed to test the report and apt-get could not install it (${(e.stderr || e.message).trim().split('\n').slice(-3).join(' | ')}): ${how}`);
  }
  const found = await which('chromium');
  if (!found) throw new Error(`apt-get installed chromium but no chromium binary is on PATH: ${how}`);
  return found;
}

const BASE_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--force-device-scale-factor=1', '--virtual-time-budget=5000'];

/** The page's DOM after its scripts ran. */
export async function dumpDom(chromium: string, file: string, width = 1400, height = 1000): Promise<string> {
  const { stdout } = await run(chromium, [...BASE_FLAGS, `--window-size=${width},${height}`, '--dump-dom', `file://${file}`], { maxBuffer: 64 << 20, timeout: 120_000 });
  return stdout;
}

export async function screenshot(chromium: string, file: string, png: string, width = 1400, height = 2400): Promise<void> {
  await run(chromium, [...BASE_FLAGS, `--window-size=${width},${height}`, `--screenshot=${png}`, `file://${file}`], { maxBuffer: 64 << 20, timeout: 120_000 });
  if (!existsSync(png)) throw new Error(`chromium wrote no screenshot to ${png}`);
}
