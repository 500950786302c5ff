// Entry point of the local model: createEngine builds the Engine of trainer/engine.ts.
import type { Engine } from '../engine';

export interface CreateEngineOptions {
  /** Base models are cached under `<dataDir>/base-models/<name>/`. */
  dataDir: string;
  /** Progress lines (base-model builds); default silent. */
  log?: (line: string) => void;
}

export function createEngine(_opts: CreateEngineOptions): Engine {
  throw new Error('not implemented yet');
}
