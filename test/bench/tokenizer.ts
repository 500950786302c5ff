// The o200k_base encoder side by side: the project's BPE (chat/tiktoken-bpe.ts, through O200kChatTokenizer) and
// js-tiktoken's Tiktoken, on the same texts, ids compared. Each round encodes texts neither arm has seen (so the
// piece caches help only as much as words repeat across texts), the arms taking turns in which goes first.
// `npx tsx test/bench/tokenizer.ts [--rounds N] [--kb K] [--json FILE]`.
import { performance } from 'node:perf_hooks';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { O200kChatTokenizer } from '../../chat/o200k-chat-tokenizer';
import { flag, loadAverage, writeResult } from './bench-kit';

const args = process.argv.slice(2);
const rounds = flag(args, 'rounds', 6);
const kb = flag(args, 'kb', 256);

const WORDS = ['the', 'model', 'answered', 'with', 'a', 'tool', 'call', 'reward', 'rollout', 'Temporal', 'workflow', 'gradient', 'step', 'policy', 'élan', 'naïve', '数据', '训练', 'モデル', '🙂', '12345', '3.14159', 'foo_bar', 'fooBar', "don't", 'I\'ll', '  ', '\n', '\t', '{"key": "value", "n": 42}', 'function f(x) { return x * 2; }', 'https://example.com/a/b?c=d'];

/** Deterministic text of about `bytes` UTF-8 bytes from `seed`. */
function text(seed: number, bytes: number): string {
  let x = seed * 2654435761 || 1;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0), x);
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[next() % WORDS.length]!;
    const word = next() % 7 === 0 ? `${w}${next() % 1000}` : w;
    parts.push(word, next() % 5 === 0 ? '. ' : ' ');
    n += Buffer.byteLength(word) + 1;
  }
  return parts.join('');
}

function timed<T>(fn: () => T): { ms: number; value: T } {
  const t = performance.now();
  const value = fn();
  return { ms: performance.now() - t, value };
}

const build = {
  ours: timed(() => new O200kChatTokenizer('o200k_base_chat')),
  jsTiktoken: timed(() => new Tiktoken(o200kBase)),
};
const ours = build.ours.value;
const theirs = build.jsTiktoken.value;
const arms: Record<'ours' | 'jsTiktoken', (s: string) => number[]> = {
  ours: (s) => ours.encode(s),
  // encode_ordinary: no special token allowed, none refused (the text is all ordinary).
  jsTiktoken: (s) => theirs.encode(s, [], []),
};

// Warm-up on its own text, then the measured rounds.
const warm = text(0, 64 * 1024);
arms.ours(warm);
arms.jsTiktoken(warm);

const ms = { ours: [] as number[], jsTiktoken: [] as number[] };
let tokens = 0;
let mismatches = 0;
for (let r = 1; r <= rounds; r++) {
  const input = text(r, kb * 1024);
  const order = r % 2 ? (['ours', 'jsTiktoken'] as const) : (['jsTiktoken', 'ours'] as const);
  const got: Partial<Record<'ours' | 'jsTiktoken', number[]>> = {};
  for (const arm of order) {
    const t = timed(() => arms[arm](input));
    ms[arm].push(t.ms);
    got[arm] = t.value;
  }
  tokens += got.ours!.length;
  if (got.ours!.length !== got.jsTiktoken!.length || got.ours!.some((id, i) => id !== got.jsTiktoken![i])) mismatches++;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mbPerS = (xs: number[]) => (kb / 1024) / (median(xs) / 1000);
const result = {
  rounds,
  kbPerRound: kb,
  tokensPerRound: Math.round(tokens / rounds),
  mismatchedRounds: mismatches,
  buildMs: { ours: Math.round(build.ours.ms), jsTiktoken: Math.round(build.jsTiktoken.ms) },
  medianMs: { ours: Math.round(median(ms.ours)), jsTiktoken: Math.round(median(ms.jsTiktoken)) },
  mbPerS: { ours: Number(mbPerS(ms.ours).toFixed(2)), jsTiktoken: Number(mbPerS(ms.jsTiktoken).toFixed(2)) },
  loadAverage: loadAverage(),
};
process.stdout.write(
  `o200k_base encode, ${rounds} rounds of ${kb} KiB (${result.tokensPerRound} tokens), ids differ in ${mismatches} rounds\n` +
    `             build ms   median ms/round   MiB/s\n` +
    `ours         ${String(result.buildMs.ours).padStart(8)}   ${String(result.medianMs.ours).padStart(15)}   ${result.mbPerS.ours}\n` +
    `js-tiktoken  ${String(result.buildMs.jsTiktoken).padStart(8)}   ${String(result.medianMs.jsTiktoken).padStart(15)}   ${result.mbPerS.jsTiktoken}\n` +
    `load average ${result.loadAverage}\n`,
);
writeResult(args, result);
