// Shared by the tinker tests: an in-process trainer on a temporary data dir, and a fixed training batch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEngine } from '../../trainer/model';
import { startTrainerServer, type TrainerServer, type TrainerServerOptions } from '../../trainer/server/server';
import type { Datum } from '../../tinker';

/** The smallest base model of trainer/model: built in about a second, cached across tests. */
export const TEST_MODEL = 'local/tiny-test';
/** Where the tests' engine keeps its base models: `npm test`'s scratch folder (removed at the end), else a temporary one. */
export const ENGINE_CACHE = path.join(process.env.AGL_TEST_SCRATCH ?? mkdtempSync(path.join(tmpdir(), 'agl-test-')), 'test-engine');

export function testEngine() {
  return createEngine({ dataDir: ENGINE_CACHE });
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startTestTrainer(opts: Partial<TrainerServerOptions> & { dataDir: string }): Promise<TrainerServer> {
  return startTrainerServer({ engine: opts.engine ?? testEngine(), ...opts });
}

/** Next-token cross-entropy datum for a text, tokenized as bytes. */
export function textDatum(text: string): Datum {
  const tokens = [...Buffer.from(text, 'utf8')];
  return {
    modelInput: tokens.slice(0, -1),
    lossFnInputs: { target_tokens: tokens.slice(1), weights: tokens.slice(1).map(() => 1) },
  };
}

export function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
