// Every recorded history (test/workflows/histories/, named by path and by the code that wrote it: see
// test/helpers/histories.ts) replayed through the current workflow code: a change that would break determinism for
// runs already in flight fails here. The replays are measured (test/helpers/workflow-coverage.ts), and two checks
// compare what they ran against the workflow files as they are now:
// - every function in the bundle's own sources is run by some replay, or is listed in replay-exemptions.ts with why
//   no history can run it and the fingerprint of the code that was judged so; so a changed function that no
//   recorded history runs through fails here: record a history of it;
// - every patched() call is run with its patch both taken (a history with the marker) and not taken (one without),
//   or the side no history can take is listed there too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { quietRuntime } from '../helpers/temporal';
import { patchesOf, recordedHistories } from '../helpers/histories';
import { istanbulFunction, istanbulStatement, readSource, replayWithCoverage, type Coverage, type PatchCall, type SourceFunction } from '../helpers/workflow-coverage';
import { UNREPLAYED_FILES, UNREPLAYED_FUNCTIONS, UNREPLAYED_PATCH_SIDES } from './replay-exemptions';

const ROOT = path.resolve(__dirname, '..', '..');
const histories = recordedHistories();
/** What each history's replay ran, by history file name. */
const ran = new Map<string, Coverage>();
const patchesIn = new Map<string, string[]>();

test('recorded histories are named by path and writer, and each says what it covers', () => {
  assert.ok(histories.length > 0, 'there are recorded histories');
  for (const h of histories) {
    assert.ok(h.meta, `${h.name} has ${h.name.replace(/\.json$/, '.meta.json')} beside it`);
    assert.equal(h.meta.path, h.pathName, `${h.name}: its meta names the same path`);
    assert.equal(h.meta.writer, h.writer, `${h.name}: its meta names the same writer`);
    assert.ok(h.meta.covers.length > 20, `${h.name}: its meta says what it covers`);
  }
  const metas = readdirSync(path.dirname(histories[0]!.file)).filter((f) => f.endsWith('.meta.json'));
  assert.equal(metas.length, histories.length, 'no meta without its history');
});

for (const h of histories) {
  test(`replays ${h.name} without nondeterminism`, async () => {
    quietRuntime();
    const history = JSON.parse(readFileSync(h.file, 'utf8')) as { events?: unknown[] };
    const patches = patchesOf(history);
    assert.deepEqual(patches, h.meta?.patches ?? patches, `${h.name}: the patches its meta lists are the ones in it`);
    patchesIn.set(h.name, patches);
    ran.set(h.name, await replayWithCoverage(history, h.name));
  });
}

/** The workflow sources (every project file the bundle holds, as the replays loaded it) and what is in them. */
function workflowSources() {
  const files = new Set<string>();
  for (const cov of ran.values()) for (const f of Object.keys(cov)) files.add(f);
  const functions: SourceFunction[] = [];
  const calls: PatchCall[] = [];
  const constants = new Map<string, string>();
  const rawCalls: (Omit<PatchCall, 'patchId'> & { arg: string })[] = [];
  for (const file of [...files].sort()) {
    const src = readSource(file, readFileSync(path.join(ROOT, file), 'utf8'));
    functions.push(...src.functions);
    rawCalls.push(...src.patchCalls);
    for (const [k, v] of src.constants) constants.set(k, v);
  }
  for (const c of rawCalls) {
    const id = /^['"](.*)['"]$/.exec(c.arg)?.[1] ?? constants.get(c.arg);
    assert.ok(id, `${c.file}:${c.line}: patched(${c.arg}) names its patch by a string or a string constant`);
    calls.push({ file: c.file, line: c.line, column: c.column, fn: c.fn, patchId: id });
  }
  return { files, functions, calls };
}

test('the bundle holds every workflow file, and every function in it is run by a recorded history', () => {
  assert.equal(ran.size, histories.length, 'every history replayed');
  const { files, functions } = workflowSources();
  for (const f of readdirSync(path.join(ROOT, 'workflows')).filter((f) => f.endsWith('.ts'))) assert.ok(files.has(`workflows/${f}`), `workflows/${f} is in the workflow bundle`);
  const exempt = new Map(UNREPLAYED_FUNCTIONS.map((e) => [e.fn, e]));
  const exemptFiles = new Set(UNREPLAYED_FILES.map((e) => e.file));
  const problems: string[] = [];
  for (const f of exemptFiles) if (!files.has(f)) problems.push(`replay-exemptions.ts names the file ${f}, which the workflow bundle no longer holds`);
  for (const fn of functions) {
    if (exemptFiles.has(fn.file)) continue;
    const by: string[] = [];
    for (const [name, cov] of ran) {
      const fc = cov[fn.file];
      const k = fc && istanbulFunction(fc, fn);
      if (fc && !k) problems.push(`${fn.id} (line ${fn.line}): Istanbul has no function there (the loader and this reading disagree)`);
      if (k && (fc.f[k] ?? 0) > 0) by.push(name);
    }
    const e = exempt.get(fn.id);
    if (by.length === 0 && !e) problems.push(`${fn.id} (line ${fn.line}, fingerprint ${fn.fingerprint}) is run by no recorded history: record one that runs it (test/helpers/histories.ts)`);
    if (by.length === 0 && e && e.fingerprint !== fn.fingerprint) {
      problems.push(`${fn.id} (line ${fn.line}) changed (fingerprint ${fn.fingerprint}, exempted as ${e.fingerprint}: "${e.why}") and no recorded history runs it: record one, or judge it again and update replay-exemptions.ts`);
    }
    if (by.length > 0 && e) problems.push(`${fn.id} is exempted in replay-exemptions.ts but ${by[0]} runs it: remove the exemption`);
  }
  const ids = new Set(functions.map((f) => f.id));
  for (const e of UNREPLAYED_FUNCTIONS) if (!ids.has(e.fn)) problems.push(`replay-exemptions.ts names ${e.fn}, which is no longer in the workflow sources`);
  assert.equal(problems.length, 0, `${functions.length} functions in ${files.size} files; ${problems.length} problems:\n${[...new Set(problems)].join('\n')}`);
});

test('every patched() is run both with its patch (a history with the marker) and without it', () => {
  assert.equal(ran.size, histories.length, 'every history replayed');
  const { calls } = workflowSources();
  assert.ok(calls.length > 0, 'the workflow code has patched() calls');
  const exempt = new Set(UNREPLAYED_PATCH_SIDES.map((e) => `${e.patch}:${e.side}`));
  const problems: string[] = [];
  for (const c of calls) {
    const sides = { patched: [] as string[], unpatched: [] as string[] };
    for (const [name, cov] of ran) {
      const fc = cov[c.file];
      const s = fc && istanbulStatement(fc, c.line, c.column);
      if (!s || (fc.s[s] ?? 0) === 0) continue;
      sides[patchesIn.get(name)!.includes(c.patchId) ? 'patched' : 'unpatched'].push(name);
    }
    for (const side of ['patched', 'unpatched'] as const) {
      const key = `${c.patchId}:${side}`;
      if (sides[side].length === 0 && !exempt.has(key)) problems.push(`${c.file}:${c.line} patched('${c.patchId}') is never run ${side} by a recorded history (${c.fn})`);
      if (sides[side].length > 0 && exempt.has(key)) problems.push(`replay-exemptions.ts exempts ${key}, but ${sides[side][0]} runs it: remove the exemption`);
    }
  }
  const ids = new Set(calls.map((c) => c.patchId));
  for (const e of UNREPLAYED_PATCH_SIDES) if (!ids.has(e.patch)) problems.push(`replay-exemptions.ts names the patch ${e.patch}, which no patched() call names any more`);
  assert.equal(problems.length, 0, problems.join('\n'));
});
