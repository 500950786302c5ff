// README's commands work from the repository root as written, beyond their parsing (commands.test.ts): every file a
// client command names is there, each README sweep validates as the client would validate it, and the sweep name
// its next commands (`report`, `sweep-status`) use is the name that sweep gets. The `client render` guide in
// docs/configuration.md states both modes and its example commands run as written, with the output it describes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseClientArgs } from '../../cli/client-args';
import { sweepInput } from '../../cli/sweep-command';
import { loadRunConfigFile } from '../../config/load';
import { client, ROOT } from '../helpers/commands';
import { docCommands, type DocCommand } from './doc-commands';

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** `npm run client -- <command> ...` of a doc, as the client parses it. */
function clientCommands(file: string) {
  return docCommands(file, read(file))
    .filter((c: DocCommand) => c.words[0] === 'npm' && c.words[1] === 'run' && c.words[2] === 'client' && c.words[3] === '--')
    .map((c) => ({ c, line: parseClientArgs(c.words.slice(4)) }));
}

/** Commands whose first argument is a file (run config or conversation). */
const FILE_COMMANDS = new Set(['start', 'validate', 'sweep', 'render']);

test('every file a README client command names is there, from the repository root', () => {
  const missing = clientCommands('README.md').flatMap(({ c, line }) => {
    const file = line.command && FILE_COMMANDS.has(line.command) ? line.rest[0] : undefined;
    return file && !existsSync(path.join(ROOT, file)) ? [`README.md:${c.line}: ${c.words.join(' ')}: ${file} does not exist`] : [];
  });
  assert.deepEqual(missing, []);
});

test("each README sweep validates as the client validates it, and the names its later commands use are the sweep's", () => {
  const commands = clientCommands('README.md');
  const sweeps = commands.filter(({ line }) => line.command === 'sweep');
  assert.ok(sweeps.length > 0, 'README shows a sweep');
  const names = new Set<string>();
  for (const { c, line } of sweeps) {
    const base = loadRunConfigFile(path.join(ROOT, line.rest[0]!));
    const v = line.values;
    const input = sweepInput(base, { grid: v.grid, seeds: v.seeds, maxParallel: v['max-parallel'], earlyStop: v['early-stop'], name: v.name }, 'q');
    assert.ok(input.grid.length > 0, `README.md:${c.line}`);
    names.add(input.name);
  }
  for (const { c, line } of commands) {
    if ((line.command === 'report' || line.command === 'sweep-status') && /-sweep$/.test(line.rest[0] ?? '')) {
      assert.ok(names.has(line.rest[0]!), `README.md:${c.line}: ${c.words.join(' ')} names ${line.rest[0]}, but the README's sweep is named ${[...names].join(', ')}`);
    }
  }
});

test('docs/configuration.md states both modes of client render, and its examples run as written', { timeout: 180_000 }, async () => {
  const doc = read('docs/configuration.md');
  const section = doc.slice(doc.indexOf("## Seeing a conversation's tokens: `client render`"));
  assert.ok(section.length < doc.length, 'the render section is there');
  assert.match(section, /without `--supervised`: the sampling prompt/);
  assert.match(section, /with `--supervised`: the training example/);
  const renders = clientCommands('docs/configuration.md').filter(({ line }) => line.command === 'render');
  assert.equal(renders.length, 2, 'an example of each mode');
  for (const { c } of renders) {
    const r = await client(c.words.slice(4));
    assert.equal(r.code, 0, `${c.words.join(' ')}\n${r.stderr}`);
    const out = JSON.parse(r.stdout) as { tokens: number[]; weights?: number[]; text?: unknown[] };
    assert.ok(out.tokens.length > 0);
    if (c.words.includes('--supervised')) {
      assert.equal(out.weights?.length, out.tokens.length, 'a weight per token');
      assert.ok(out.weights!.includes(1) && out.weights!.includes(0), 'the last assistant message trained, the rest not');
      assert.ok(Array.isArray(out.text), '--text adds the pieces');
    } else {
      assert.equal(out.weights, undefined);
      // The example ends with an assistant message: rendered as a prompt, the client says so.
      assert.match(r.stderr, /^note: rendered as a sampling prompt: every message, the last assistant one too, then the start of a new assistant turn/m);
    }
  }
});
