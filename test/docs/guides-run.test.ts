// Every command path of README.md and docs/*.md either runs here or names the test that runs it. Run here (cheap,
// no stack): the help of each program the guides use, with every option and client command the guides give listed
// in it; `client validate` of every run config a guide names (each as a user runs it); every `client render` a
// guide shows. The rest (a live stack, hosted Tinker, an engine) is looked up by what it runs in RUN_BY: the test
// that runs it, which must exist and mention it. A guide that runs client commands against a live stack says how to
// keep `npm start`'s stack up (`--keep-alive`), or starts the services itself. commands.test.ts checks that each
// command parses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseClientArgs } from '../../cli/client-args';
import { EXAMPLES } from '../../dev/examples';
import { loadRunConfigFile } from '../../config/load';
import { client, ROOT, runCommand } from '../helpers/commands';
import { docCommands, inlineNpmCommands, type DocCommand } from './doc-commands';

const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');
const all: DocCommand[] = docs.flatMap((f) => [...docCommands(f, read(f)), ...inlineNpmCommands(f, read(f))]);
const isClient = (c: DocCommand) => c.words[0] === 'npm' && c.words[1] === 'run' && c.words[2] === 'client';
const isStart = (c: DocCommand) => c.words[0] === 'npm' && c.words[1] === 'start';
const clientLine = (c: DocCommand) => parseClientArgs(c.words.slice(c.words[3] === '--' ? 4 : 3));
const startFlags = (c: DocCommand) => c.words.slice(c.words[2] === '--' ? 3 : 2);

/** Run configs the guides name that are the reader's own file, not one of the repository's. */
const READERS_OWN = new Set(['my-run.json']);

/** What runs the commands that need more than this test has: the test file and what its source must mention. */
const RUN_BY_CLIENT: Record<string, { test: string; mentions: string }> = {
  start: { test: 'test/connect/first-hour.test.ts', mentions: "'start'" },
  watch: { test: 'test/connect/first-hour.test.ts', mentions: "'watch'" },
  setup: { test: 'test/connect/first-hour.test.ts', mentions: "'setup'" },
  status: { test: 'test/dev/start-hosted.test.ts', mentions: "'status'" },
  stop: { test: 'test/dev/start-hosted.test.ts', mentions: "'stop'" },
  list: { test: 'test/connect/tls-endpoint.test.ts', mentions: "'list'" },
  fork: { test: 'test/e2e/fork.test.ts', mentions: "'fork'" },
  sweep: { test: 'test/e2e/sweep.test.ts', mentions: "'sweep'" },
  'sweep-status': { test: 'test/e2e/sweep.test.ts', mentions: "'sweep-status'" },
  report: { test: 'test/cli/report-kl-note.test.ts', mentions: "'report'" },
  export: { test: 'test/activities/second-host.test.ts', mentions: "'export'" },
  // The run's own commands (signals and updates the client sends), on a finished run and through the Temporal CLI.
  pause: { test: 'test/cli/mistakes.test.ts', mentions: "'pause'" },
  resume: { test: 'test/workflows/temporal-cli.test.ts', mentions: "'resume'" },
  checkpoint: { test: 'test/cli/mistakes.test.ts', mentions: "'checkpoint'" },
  configure: { test: 'test/cli/mistakes.test.ts', mentions: "'configure'" },
  tokenizer: { test: 'test/cli/render-modes.test.ts', mentions: 'tokenizer fetch' },
};

/** `npm start` by what it starts: the first rule whose flag the command has. */
const RUN_BY_START: Array<{ flag: string | null; value?: string; test: string; mentions: string }> = [
  { flag: '--example', value: 'ai-sdk', test: 'test/agents/ai-sdk-start.test.ts', mentions: "'ai-sdk'" },
  { flag: '--example', value: 'hello-async', test: 'test/e2e/async-run.test.ts', mentions: "'hello-async'" },
  // The other examples are the hello stack with another agent: their agents against the proxy.
  { flag: '--example', value: 'guess', test: 'test/proxy/examples.test.ts', mentions: 'EXAMPLES' },
  { flag: '--example', value: 'hello-responses', test: 'test/proxy/examples.test.ts', mentions: 'helloResponsesAgent' },
  { flag: '--hosted', test: 'test/dev/start-hosted.test.ts', mentions: "'--hosted'" },
  // --gpu needs an NVIDIA machine: the command is parsed and planned there, the CPU path runs in skyrl-run.
  { flag: '--gpu', test: 'test/dev/start-engine-options.test.ts', mentions: "'--gpu'" },
  { flag: '--engine', test: 'test/engines/skyrl-run.test.ts', mentions: 'engine' },
  { flag: '--runners', value: '0', test: 'test/e2e/bring-your-own-agent.test.ts', mentions: "'--runners', '0'" },
  { flag: null, test: 'test/bench/first-start.ts', mentions: "'dev/main.ts'" },
];

function mentioned(t: { test: string; mentions: string }): string | undefined {
  if (!existsSync(path.join(ROOT, t.test))) return `${t.test} does not exist`;
  return read(t.test).includes(t.mentions) ? undefined : `${t.test} does not mention ${t.mentions}`;
}

test("npm start's and the client's help run, and list every option and command the guides use", async () => {
  const start = await runCommand('dev/main.ts', ['--help']);
  assert.equal(start.code, 0, start.stderr);
  assert.match(start.stdout, /^usage: npm start -- \[options\]/);
  const help = await client(['--help']);
  assert.equal(help.code, 0, help.stderr);
  const missing: string[] = [];
  for (const c of all.filter(isStart)) {
    for (const w of startFlags(c)) if (w.startsWith('--') && !start.stdout.includes(w)) missing.push(`${c.file}:${c.line}: ${w} is not in npm start --help`);
  }
  for (const c of all.filter(isClient)) {
    const line = clientLine(c);
    if (line.command && !new RegExp(`^  ${line.command.replace(/-/g, '\\-')}\\b`, 'm').test(help.stdout)) missing.push(`${c.file}:${c.line}: ${line.command} is not in client --help`);
    for (const w of c.words) if (/^--[a-z]/.test(w) && w !== '--' && !help.stdout.includes(w)) missing.push(`${c.file}:${c.line}: ${w} is not in client --help`);
  }
  assert.deepEqual(missing, []);
});

test('every run config a guide names validates as the client validates it, run as a user runs it', { timeout: 300_000 }, async () => {
  const files = new Set<string>();
  for (const c of all.filter(isClient)) {
    const line = clientLine(c);
    if (!['start', 'validate', 'sweep'].includes(line.command ?? '')) continue;
    const file = line.rest[0];
    if (!file || READERS_OWN.has(file)) continue;
    assert.ok(existsSync(path.join(ROOT, file)), `${c.file}:${c.line}: ${file} does not exist`);
    files.add(file);
  }
  assert.ok(files.size >= 3, `run configs named: ${[...files].join(', ')}`);
  for (const file of files) {
    const r = await client(['validate', file]);
    assert.equal(r.code, 0, `npm run client -- validate ${file}:\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^${file.replace(/\./g, '\\.')}: valid`));
  }
});

test("agents/examples/ai-sdk.run.json is the run `npm start -- --example ai-sdk` trains, under the client's name", () => {
  const fromFile = loadRunConfigFile(path.join(ROOT, 'agents/examples/ai-sdk.run.json'));
  const urls = { storeUrl: fromFile.storeAddress, trainerUrl: fromFile.baseUrl ?? '', proxyPort: fromFile.llmProxyPort, logPath: fromFile.logPath };
  const example = { ...EXAMPLES['ai-sdk']!.config(urls), runName: 'ai-sdk-cli', logPath: '.data/runs/ai-sdk-cli' };
  const picked = (o: Record<string, unknown>) => Object.fromEntries(Object.keys(example).map((k) => [k, o[k]]));
  const file = JSON.parse(read('agents/examples/ai-sdk.run.json')) as Record<string, unknown>;
  const { baseUrl: _b, storeAddress: _s, llmProxyPort: _p, ...exampleGiven } = example as Record<string, unknown>;
  assert.deepEqual(picked(file), picked({ ...exampleGiven, baseUrl: undefined, storeAddress: undefined, llmProxyPort: undefined }));
});

test('every client render a guide shows runs as written', { timeout: 300_000 }, async () => {
  const renders = all.filter((c) => isClient(c) && !c.inline && clientLine(c).command === 'render');
  assert.ok(renders.length >= 2);
  for (const c of renders) {
    const r = await client(c.words.slice(4));
    assert.equal(r.code, 0, `${c.file}:${c.line}: ${c.words.join(' ')}\n${r.stderr}`);
    assert.ok((JSON.parse(r.stdout) as { tokens: number[] }).tokens.length > 0);
  }
});

test('every other npm start and client command names the test that runs it', () => {
  const problems: string[] = [];
  for (const c of all.filter(isClient)) {
    const cmd = clientLine(c).command;
    if (!cmd || cmd === 'validate' || cmd === 'render') continue; // run above
    const t = RUN_BY_CLIENT[cmd];
    const p = t ? mentioned(t) : `no test named for client ${cmd} (RUN_BY_CLIENT in test/docs/guides-run.test.ts)`;
    if (p) problems.push(`${c.file}:${c.line}: ${c.words.join(' ')}: ${p}`);
  }
  for (const c of all.filter(isStart)) {
    const flags = startFlags(c);
    if (flags.includes('--help')) continue;
    const rule = RUN_BY_START.find((r) => r.flag === null || (flags.includes(r.flag) && (r.value === undefined || flags[flags.indexOf(r.flag) + 1] === r.value)));
    const p = rule ? mentioned(rule) : 'no rule in RUN_BY_START';
    if (p) problems.push(`${c.file}:${c.line}: ${c.words.join(' ')}: ${p}`);
  }
  assert.deepEqual(problems, []);
});

test('a guide that runs client commands on a live stack says how to keep npm start up (--keep-alive)', () => {
  const LIVE = new Set(['start', 'status', 'watch', 'stop', 'pause', 'resume', 'checkpoint', 'configure', 'list', 'fork', 'sweep', 'sweep-status', 'export']);
  const silent = docs.filter((f) => {
    const live = docCommands(f, read(f)).some((c) => isClient(c) && LIVE.has(clientLine(c).command ?? ''));
    // A guide that starts the services itself (`npm run worker` and the rest) needs no npm start.
    const ownStack = docCommands(f, read(f)).some((c) => c.words.join(' ') === 'npm run worker');
    return live && !ownStack && !read(f).includes('--keep-alive');
  });
  assert.deepEqual(silent, []);
  // "With `npm start` running" alone would send the reader to a command that exits after its run.
  const bare = docs.flatMap((f) => (/[Ww]ith `npm start` running/.test(read(f)) ? [f] : []));
  assert.deepEqual(bare, []);
});
