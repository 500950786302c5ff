// The test reporter `npm test` uses: one line per test file, and for a failure the test's name, its error and the
// last lines its file printed (the output of passing files is not shown). AGL_TEST_VERBOSE=1 prints everything.
// Plain JavaScript: node loads reporters before any TypeScript loader is in place.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT_TAIL = 40;
const ERROR_LINES = 40;
const SLOWEST = 25;

const rel = (file) => (file ? path.relative(ROOT, file) : '?');
const seconds = (ms) => `${((ms ?? 0) / 1000).toFixed(1)} s`;
const clip = (text, n) => {
  const lines = text.split('\n');
  return lines.length <= n ? text : [...lines.slice(0, n), `... (${lines.length - n} more lines)`].join('\n');
};

/** The assertion (or other error) behind a failure, without the runner's wrapper around it. */
function describeError(err) {
  // A file that crashed or was killed: how it ended.
  if (err && (err.exitCode !== undefined || err.signal)) return `the test file ended with exit code ${err.exitCode ?? '-'}${err.signal ? `, signal ${err.signal}` : ''}`;
  const inner = err?.failureType === 'testCodeFailure' && err.cause ? err.cause : err;
  return clip(inspect(inner, { depth: 4 }), ERROR_LINES);
}

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* quietReporter(source) {
  const output = new Map();
  const perFile = new Map();
  const failures = [];
  const durations = [];
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const tally = (file) => {
    let t = perFile.get(file);
    if (!t) perFile.set(file, (t = { passed: 0, failed: 0, skipped: 0 }));
    return t;
  };
  for await (const ev of source) {
    const d = ev.data;
    const file = d.file ?? '';
    switch (ev.type) {
      case 'test:stdout':
      case 'test:stderr': {
        const lines = output.get(file) ?? [];
        lines.push(...(d.message ?? '').replace(/\n$/, '').split('\n'));
        output.set(file, lines.slice(-OUTPUT_TAIL));
        break;
      }
      case 'test:pass':
        if (d.name === file) break; // the file itself
        if (d.skip || d.todo) {
          tally(file).skipped++;
          counts.skipped++;
        } else if (d.nesting === 0) {
          tally(file).passed++;
          counts.passed++;
        }
        break;
      case 'test:fail': {
        const err = d.details?.error;
        if (err?.failureType === 'subtestsFailed') break; // its failing subtests are reported themselves
        tally(file).failed++;
        counts.failed++;
        const name = d.name === file ? '(the file itself)' : d.name;
        failures.push(`FAIL ${rel(file)} › ${name} (${seconds(d.details?.duration_ms)})\n${describeError(err)}`);
        const printed = output.get(file);
        yield `\n${failures.at(-1)}\n${printed?.length ? `--- the last ${printed.length} lines ${rel(file)} printed:\n${printed.join('\n')}\n---\n` : ''}`;
        break;
      }
      case 'test:complete':
        if (d.name !== file || !file) break;
        {
          const t = tally(file);
          const skipped = t.skipped ? `, ${t.skipped} skipped` : '';
          // A file can fail with all its tests passed (it crashed, or hung and was killed): its own failure follows.
          const bad = t.failed > 0 || d.details?.passed === false;
          durations.push([rel(file), d.details?.duration_ms ?? 0]);
          yield `${bad ? 'FAIL' : 'ok  '} ${rel(file)}  ${t.passed} passed${t.failed ? `, ${t.failed} failed` : ''}${skipped}  ${seconds(d.details?.duration_ms)}\n`;
          if (!bad) output.delete(file);
        }
        break;
      default:
        break;
    }
  }
  // CI keeps only the tail of its log: the slowest files are printed last so the budget's spending shows there.
  const slowest = durations.sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
  if (slowest.length > 1) yield `\nslowest files:\n${slowest.map(([f, ms]) => `  ${seconds(ms).padStart(8)}  ${f}`).join('\n')}\n`;
  yield `\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`;
  if (failures.length) yield `\nfailures:\n${failures.map((f) => f.split('\n')[0]).join('\n')}\n`;
}
