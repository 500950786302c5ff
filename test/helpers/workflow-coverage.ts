// Which workflow code a replay runs, measured, not assumed. The workflow bundle is built with the project's
// TypeScript instrumented by Istanbul (test/helpers/coverage-loader.cjs, before swc strips the types, so positions
// are the source's own), and @temporalio/nyc-test-coverage's workflow interceptor sends each activation's counters
// out through its `coverage` sink; the sink here is called during replay too (the package's own sink is not, and a
// replay is nothing but replay). The workflow files are read with the TypeScript compiler: every function in them,
// and every patched() call, is matched to the counters by its position.
import { createHash } from 'node:crypto';
import path from 'node:path';
import ts from 'typescript';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

const ROOT = path.resolve(__dirname, '..', '..');

interface Loc { start: { line: number; column: number }; end: { line: number; column: number } }
/** One file's Istanbul counters (the parts used here). */
export interface FileCoverage {
  path: string;
  statementMap: Record<string, Loc>;
  fnMap: Record<string, { name: string; decl: Loc; loc: Loc }>;
  s: Record<string, number>;
  f: Record<string, number>;
}
export type Coverage = Record<string, FileCoverage>;

let instrumented: Promise<WorkflowBundleWithSourceMap> | undefined;
/** The workflow bundle with Istanbul counters in the project's code (built once per process). */
export function instrumentedWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  instrumented ??= bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    workflowInterceptorModules: [require.resolve('@temporalio/nyc-test-coverage/lib/interceptors')],
    webpackConfigHook: (config) => {
      config.module?.rules?.push({ test: /\.ts$/, exclude: /node_modules/, enforce: 'pre', use: [{ loader: path.join(__dirname, 'coverage-loader.cjs') }] });
      return config;
    },
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
  });
  return instrumented;
}

/** Merges counters: a count is how many times, summed (only > 0 matters here). */
function mergeInto(into: Coverage, from: Coverage): void {
  for (const [file, fc] of Object.entries(from)) {
    const key = path.relative(ROOT, file);
    const have = into[key];
    if (!have) {
      into[key] = { path: key, statementMap: fc.statementMap, fnMap: fc.fnMap, s: { ...fc.s }, f: { ...fc.f } };
      continue;
    }
    for (const [k, n] of Object.entries(fc.s)) have.s[k] = (have.s[k] ?? 0) + n;
    for (const [k, n] of Object.entries(fc.f)) have.f[k] = (have.f[k] ?? 0) + n;
  }
}

/** Replays `history` through the instrumented bundle (throws as Worker.runReplayHistory does) and returns what ran. */
export async function replayWithCoverage(history: unknown, workflowId: string): Promise<Coverage> {
  const out: Coverage = {};
  const workflowBundle = await instrumentedWorkflowBundle();
  await Worker.runReplayHistory(
    {
      workflowBundle,
      sinks: { coverage: { merge: { fn: (_info: unknown, data: Coverage) => mergeInto(out, data), callDuringReplay: true } } },
    },
    history as never,
    workflowId,
  );
  return out;
}

/** A function in a workflow source file, as the TypeScript compiler reads it. */
export interface SourceFunction {
  file: string;
  /** file:Outer/inner/callee(arg)#n: stable under edits elsewhere in the file. */
  id: string;
  line: number;
  column: number;
  /** Where Istanbul may place it: its start, past `export`/`default`, its name. */
  starts: { line: number; column: number }[];
  /** sha256 (12 hex) of its tokens, comments and layout left out: changes when its code does. */
  fingerprint: string;
}

/** A patched() (or deprecatePatch()) call: its patch id and where it is. */
export interface PatchCall { file: string; patchId: string; line: number; column: number; fn: string }

function tokensOf(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  const out: string[] = [];
  for (let t = scanner.scan(); t !== ts.SyntaxKind.EndOfFileToken; t = scanner.scan()) out.push(scanner.getTokenText());
  return out.join(' ');
}

function calleeName(e: ts.Expression): string {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isCallExpression(e)) return calleeName(e.expression);
  return 'call';
}

function ownName(node: ts.Node): string {
  const p = node.parent;
  if ((ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node)) && node.name) return node.name.text;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (ts.isClassDeclaration(node)) return node.name?.text ?? '(class)';
  if (p && ts.isVariableDeclaration(p) && p.initializer === node) return p.name.getText();
  if (p && (ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.initializer === node) return p.name.getText();
  if (p && ts.isCallExpression(p)) {
    const i = p.arguments.indexOf(node as ts.Expression);
    const first = p.arguments[0];
    const callee = calleeName(p.expression);
    if (i > 0 && first && ts.isIdentifier(first)) return `${callee}(${first.text})`;
    return `${callee}#${i}`;
  }
  return '(anonymous)';
}

const isFunctionLike = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  (ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) || ts.isGetAccessorDeclaration(n) || ts.isSetAccessorDeclaration(n)) &&
  n.body !== undefined;

/** The functions and patched() calls of one source file. */
export function readSource(file: string, text: string): { functions: SourceFunction[]; patchCalls: (Omit<PatchCall, 'patchId'> & { arg: string })[]; constants: Map<string, string> } {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const functions: SourceFunction[] = [];
  const patchCalls: (Omit<PatchCall, 'patchId'> & { arg: string })[] = [];
  const constants = new Map<string, string>();
  const seen = new Map<string, number>();
  const pos = (n: ts.Node) => {
    const lc = sf.getLineAndCharacterOfPosition(n.getStart(sf));
    return { line: lc.line + 1, column: lc.character };
  };
  const visit = (node: ts.Node, scope: string[], fnId: string) => {
    let inner = scope;
    let innerFn = fnId;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && ts.isStringLiteral(node.initializer)) constants.set(node.name.text, node.initializer.text);
    if (ts.isClassDeclaration(node)) inner = [...scope, ownName(node)];
    if (isFunctionLike(node)) {
      const base = `${file}:${[...scope, ownName(node)].join('/')}`;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      const id = n === 1 ? base : `${base}~${n}`;
      const starts = [pos(node)];
      const past = node.modifiers?.filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.DefaultKeyword)[0];
      const mods = node.modifiers;
      const next = mods?.length ? (past ?? node.getChildren(sf).find((c) => c.getStart(sf) >= mods.end)) : undefined;
      if (next) starts.push(pos(next));
      if (node.name) starts.push(pos(node.name));
      functions.push({ file, id, ...pos(node), starts, fingerprint: createHash('sha256').update(tokensOf(node.getText(sf))).digest('hex').slice(0, 12) });
      inner = [...scope, ownName(node) + (n === 1 ? '' : `~${n}`)];
      innerFn = id;
    }
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && (node.expression.text === 'patched' || node.expression.text === 'deprecatePatch') && node.arguments[0]) {
      patchCalls.push({ file, ...pos(node), fn: fnId, arg: node.arguments[0].getText(sf) });
    }
    ts.forEachChild(node, (c) => visit(c, inner, innerFn));
  };
  visit(sf, [], `${file}:(module)`);
  return { functions, patchCalls, constants };
}

/** Istanbul's key of the function that starts at line:column in `fc`, if any. */
export function istanbulFunction(fc: FileCoverage, fn: Pick<SourceFunction, 'starts'>): string | undefined {
  const at = (l: Loc['start']) => fn.starts.some((s) => s.line === l.line && s.column === l.column);
  for (const [k, f] of Object.entries(fc.fnMap)) if (at(f.loc.start)) return k;
  for (const [k, f] of Object.entries(fc.fnMap)) if (at(f.decl.start)) return k;
  return undefined;
}

/** Istanbul's key of the innermost statement that holds line:column. */
export function istanbulStatement(fc: FileCoverage, line: number, column: number): string | undefined {
  const before = (a: { line: number; column: number }, b: { line: number; column: number }) => a.line < b.line || (a.line === b.line && a.column <= b.column);
  let best: [string, Loc] | undefined;
  for (const [k, l] of Object.entries(fc.statementMap)) {
    if (!before(l.start, { line, column }) || !before({ line, column }, l.end)) continue;
    if (!best || before(best[1].start, l.start)) best = [k, l];
  }
  return best?.[0];
}
