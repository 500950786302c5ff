// Rebuilds the shipped base models from their recipes (base-models.ts), deterministically.
//   node --import tsx trainer/model/rebuild-bases.ts [--check] [name ...]
// Without --check the weights in trainer/model/weights/ are written anew (after a recipe change); with --check
// they are rebuilt and compared with the shipped checksum, byte for byte (exit 1 on a difference).
import { recipeFor, recipeHash, RECIPES, trainBase } from './base-models';
import { sha256 } from './checkpoint';
import { readShipped, writeShipped } from './shipped-bases';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const names = args.filter((a) => !a.startsWith('--'));
  let failed = false;
  for (const r of names.length ? names.map(recipeFor) : RECIPES) {
    const t0 = Date.now();
    const params = await trainBase(r, (line) => process.stdout.write(`${line}\n`));
    const took = ((Date.now() - t0) / 1000).toFixed(1);
    if (check) {
      const shipped = await readShipped(r.name, recipeHash(r));
      const same = shipped !== null && sha256(shipped) === sha256(params);
      failed ||= !same;
      process.stdout.write(`${r.name}: built in ${took} s; ${same ? 'identical to the shipped weights' : shipped ? 'DIFFERS from the shipped weights' : 'nothing shipped for this recipe'}\n`);
    } else {
      const meta = await writeShipped(r.name, recipeHash(r), params);
      process.stdout.write(`${r.name}: built in ${took} s; shipped ${meta.params} parameters, sha256 ${meta.weightsSha256}\n`);
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
