// Base-model weights shipped with the project (trainer/model/weights/<name>.bin + .json), so a fresh clone's first
// start does not spend minutes building them. Each is exactly what its recipe builds (base-models.ts): the .json
// names the recipe hash and the weights' sha256, and a shipped file is used only when both match, so a changed
// recipe falls back to building (and `rebuild-bases.ts` rebuilds and re-ships, or checks the shipped bytes).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { sha256 } from './checkpoint';

export const SHIPPED_DIR = path.join(__dirname, 'weights');

export interface ShippedMeta {
  baseModel: string;
  recipe: string;
  weightsSha256: string;
  params: number;
}

const fileBase = (name: string) => path.join(SHIPPED_DIR, name.replace(/\//g, '--'));

/** The shipped weights of `name` when they are what `recipe` (its hash) builds; null otherwise. */
export async function readShipped(name: string, recipe: string): Promise<Float64Array | null> {
  let meta: ShippedMeta;
  try {
    meta = JSON.parse(await fs.readFile(`${fileBase(name)}.json`, 'utf8')) as ShippedMeta;
  } catch {
    return null;
  }
  if (meta.baseModel !== name || meta.recipe !== recipe) return null;
  const bytes = await fs.readFile(`${fileBase(name)}.bin`);
  const params = new Float64Array(bytes.byteLength / 8);
  Buffer.from(params.buffer).set(bytes);
  if (params.length !== meta.params || sha256(params) !== meta.weightsSha256) throw new Error(`shipped weights of ${name} do not match their checksum (${fileBase(name)}.bin)`);
  return params;
}

export async function writeShipped(name: string, recipe: string, params: Float64Array): Promise<ShippedMeta> {
  const meta: ShippedMeta = { baseModel: name, recipe, weightsSha256: sha256(params), params: params.length };
  await fs.mkdir(SHIPPED_DIR, { recursive: true });
  await fs.writeFile(`${fileBase(name)}.bin`, Buffer.from(params.buffer, params.byteOffset, params.byteLength));
  await fs.writeFile(`${fileBase(name)}.json`, JSON.stringify(meta, null, 1) + '\n');
  return meta;
}
