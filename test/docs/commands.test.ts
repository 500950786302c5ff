// Every shell command in README.md and docs/*.md (```sh blocks, and `$ ` lines of other blocks) is checked here:
// `npm run <script>` names a script of package.json; `npm run client -- ...` and `npm start -- ...` go through the
// client's and npm start's own argument parsers (an unknown command or option fails); `npm run bench -- <name>`
// names a benchmark; every other program is in ELSEWHERE with the test file that runs it, which must exist and
// mention it. A command no rule knows fails the test, so a new doc command comes with its check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CLIENT_COMMANDS, checkClientCommandLine, parseClientArgs } from '../../cli/client-args';
import { parseStartOptions } from '../../dev/start-options';
import { benchNames } from '../bench/bench-names';
import { docCommands, inlineNpmCommands, type DocCommand } from './doc-commands';

const ROOT = path.resolve(__dirname, '..', '..');
const scripts = Object.keys(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>);

/**
 * Programs the docs run that are not npm scripts: the first words of the command, the test that runs the same
 * thing, and what that test's source must mention (so the entry breaks when the test stops running it).
 */
const ELSEWHERE: Array<{ words: string[]; test: string; mentions: string }> = [
  { words: ['.temporal/bin/temporal', 'workflow'], test: 'test/workflows/temporal-cli.test.ts', mentions: "'workflow'" },
  { words: ['temporal', '--profile'], test: 'test/connect/first-hour.test.ts', mentions: 'TEMPORAL_PROFILE' },
  { words: ['temporal', 'server', 'start-dev'], test: 'test/multi-host/several-hosts.test.ts', mentions: 'start-dev' },
  { words: ['python3', '-m', 'venv'], test: 'test/e2e/bring-your-own-agent.test.ts', mentions: 'constraints-agl-0.3' },
  { words: ['.data/venv-agl/bin/pip', 'install'], test: 'test/e2e/bring-your-own-agent.test.ts', mentions: 'constraints-agl-0.3' },
  { words: ['.data/venv-agl/bin/python', 'agents/python/hello_runner.py'], test: 'test/e2e/bring-your-own-agent.test.ts', mentions: 'hello_runner.py' },
  { words: ['pip', 'install', 'agentlightning==1.0.2'], test: 'test/interop/agl1-python.ts', mentions: 'agentlightning==1.0.2' },
  { words: ['agl-controller'], test: 'test/interop/agl1-controller.test.ts', mentions: 'agl-controller' },
  { words: ['curl'], test: 'test/store/full-disk.test.ts', mentions: '/v1/agl/health' },
  { words: ['jq'], test: 'test/e2e/fork.test.ts', mentions: 'forkOf' },
  { words: ['sqlite3'], test: 'test/store/backup.test.ts', mentions: 'VACUUM INTO' },
  { words: ['temporal', 'worker', 'deployment', 'set-current-version'], test: 'test/workflows/rolling-upgrade.test.ts', mentions: "'set-current-version'" },
  { words: ['temporal', 'worker', 'deployment', 'describe-version'], test: 'test/workflows/rolling-upgrade.test.ts', mentions: "'describe-version'" },
];

/** npm scripts whose flags the docs give and another test runs as written (the services' own parsers). */
const SCRIPT_TESTS: Record<string, { test: string; mentions: string }> = {
  store: { test: 'test/multi-host/several-hosts.test.ts', mentions: "'store'" },
  trainer: { test: 'test/multi-host/several-hosts.test.ts', mentions: "'trainer'" },
  proxy: { test: 'test/multi-host/several-hosts.test.ts', mentions: "'proxy'" },
  worker: { test: 'test/multi-host/several-hosts.test.ts', mentions: "'worker'" },
  runners: { test: 'test/multi-host/several-hosts.test.ts', mentions: "'runners'" },
};

function mentionedBy(file: string, text: string): string | undefined {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return `${file} does not exist`;
  return readFileSync(full, 'utf8').includes(text) ? undefined : `${file} does not mention ${text}`;
}

/** What is wrong with one command, or undefined when its check passes. */
export function problemOf(c: DocCommand): string | undefined {
  const [program, ...args] = c.words;
  if (program === 'npm') {
    const [verb, ...more] = args;
    if (verb === 'ci' || (verb === 'test' && more.length === 0)) return undefined;
    if (verb === 'test') return more[0] === '--' && more.slice(1).every((p) => existsSync(path.join(ROOT, p))) ? undefined : `npm test: ${more.join(' ')} names no test file or folder`;
    const script = verb === 'run' ? more[0] : verb;
    const after = verb === 'run' ? more.slice(1) : more;
    if (!script || !scripts.includes(script)) return `npm script ${JSON.stringify(script)} is not in package.json`;
    const flags = after[0] === '--' ? after.slice(1) : after;
    if (after.length && after[0] !== '--') return `npm ${verb} ${script}: arguments must come after --`;
    try {
      if (script === 'client' && c.inline) {
        // A mention such as `npm run client -- start`: the command and options must exist; arguments may be left out.
        const cl = parseClientArgs(flags);
        if (cl.command && !(CLIENT_COMMANDS as readonly string[]).includes(cl.command)) return `client: unknown command ${cl.command}`;
      } else if (script === 'client') checkClientCommandLine(parseClientArgs(flags));
      else if (script === 'start') parseStartOptions(flags, c.env, ROOT);
      else if (script === 'bench') {
        if (flags[0] && !benchNames().includes(flags[0])) return `npm run bench: no benchmark ${flags[0]} (test/bench)`;
      } else if (flags.length) {
        const t = SCRIPT_TESTS[script];
        if (!t) return `npm run ${script} with arguments: no parser check and no test named for it (SCRIPT_TESTS)`;
        return mentionedBy(t.test, t.mentions);
      }
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  }
  const known = ELSEWHERE.find((e) => e.words.every((w, i) => c.words[i] === w));
  if (!known) return `no check knows this command: add it to ELSEWHERE in test/docs/commands.test.ts with the test that runs it`;
  return mentionedBy(known.test, known.mentions);
}

const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

test('every command in README.md and docs/*.md is checked and passes its check', () => {
  const commands = docs.flatMap((f) => {
    const md = readFileSync(path.join(ROOT, f), 'utf8');
    return [...docCommands(f, md), ...inlineNpmCommands(f, md)];
  });
  assert.ok(commands.length > 40, `only ${commands.length} commands found: is the extraction broken?`);
  const problems = commands.flatMap((c) => {
    const p = problemOf(c);
    return p ? [`${c.file}:${c.line}: ${c.words.join(' ')}\n    ${p}`] : [];
  });
  assert.deepEqual(problems, [], `doc commands that would fail:\n${problems.join('\n')}`);
});

test('a broken doc line is caught: an unknown client command, an unknown option, a missing script or bench', () => {
  const broken = [
    'npm run client -- statuss hello',
    'npm run client -- start agents/examples/hello.run.json --frsh',
    'npm run client -- configure hello',
    'npm start -- --runner 0',
    'npm run stor -- --port 0',
    'npm run bench -- mutations',
    'npm test -- test/no-such-folder',
    'wget http://example.com',
  ];
  for (const line of broken) {
    const [c] = docCommands('broken.md', `\`\`\`sh\n${line}\n\`\`\`\n`);
    assert.ok(c, line);
    assert.ok(problemOf(c), `${line} should have been refused`);
  }
});

test('the extraction: continuations, comments, several commands on a line, env assignments and $VARs', () => {
  const md = [
    '```sh',
    'export K=tml-x            # a comment',
    'T=.temporal/bin/temporal',
    '$T workflow start --type trainingRun \\',
    '   --input-file a.json',
    'npm run store & FOO=1 npm run worker > w.log &   # both',
    'for i in 0 1; do .data/venv-agl/bin/python agents/python/hello_runner.py --worker-id $i & done',
    '```',
    '```',
    '$ curl -s http://127.0.0.1:4747/v1/agl/health',
    'not a command',
    '```',
  ].join('\n');
  const got = docCommands('x.md', md).map((c) => ({ line: c.line, words: c.words.join(' '), env: c.env }));
  assert.deepEqual(got.map((g) => g.words), [
    '.temporal/bin/temporal workflow start --type trainingRun --input-file a.json',
    'npm run store',
    'npm run worker',
    '.data/venv-agl/bin/python agents/python/hello_runner.py --worker-id $i',
    'curl -s http://127.0.0.1:4747/v1/agl/health',
  ]);
  assert.equal(got[0]!.line, 4);
  assert.equal(got[2]!.env.FOO, '1');
  assert.equal(got[2]!.env.K, 'tml-x');
});
