// Sampling from frozen weights (tinker-protocol.md §A.9).
//
// Logprobs: each returned logprob is log q(token), where q is the distribution the token was actually
// drawn from: softmax(logits / temperature), restricted to top_k / top_p and renormalised. With the
// RL defaults (temperature 1, top_k -1, top_p 1) that is exactly the model's log-prob, so it equals
// what forwardBackward reports for the same weights and tokens (the importance ratio starts at 1).
// Greedy decoding (temperature 0) reports the temperature-1 log-prob of the chosen token.
import { randomBytes } from 'node:crypto';
import { UserError } from '../engine';
import type { SampleParams, SampledSequence } from '../engine';
import { ModelConfig, Layout } from './config';
import { cloneState, DecodeState, stateFromPrompt, step } from './decode';
import { forward, logSoftmaxRow } from './gpt';
import { Rng } from './rng';
import { decodeBytes, encode, EOS_ID } from './tokenizer';

export interface ResolvedParams {
  maxTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  stopIds: Set<number>;
  stopSeqs: number[][];
  seed: string;
}

/** Validates sampling parameters (UserError on bad ones) and applies Tinker's defaults. */
export function resolveParams(p: Partial<SampleParams>, numSamples: number): ResolvedParams {
  if (!Number.isInteger(numSamples) || numSamples < 1) throw new UserError(`num_samples must be a positive integer, got ${numSamples}`);
  const maxTokens = p.maxTokens ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isInteger(maxTokens) || maxTokens < 0) throw new UserError(`max_tokens must be a non-negative integer, got ${p.maxTokens}`);
  const temperature = p.temperature ?? 1;
  if (!Number.isFinite(temperature) || temperature < 0) throw new UserError(`temperature must be >= 0, got ${p.temperature}`);
  const topK = p.topK ?? -1;
  if (!Number.isInteger(topK) || topK < -1) throw new UserError(`top_k must be -1 (off) or a positive integer, got ${p.topK}`);
  const topP = p.topP ?? 1;
  if (!Number.isFinite(topP) || topP <= 0 || topP > 1) throw new UserError(`top_p must be in (0, 1], got ${p.topP}`);
  const stopIds = new Set<number>();
  const stopSeqs: number[][] = [];
  const raw = p.stop as unknown;
  const stop = raw === null || raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(stop)) throw new UserError('stop must be a list of strings or of token ids');
  for (const s of stop as Array<string | number>) {
    if (typeof s === 'number') {
      if (!Number.isInteger(s)) throw new UserError(`stop token ${s} is not an integer`);
      stopIds.add(s);
    } else if (typeof s === 'string') {
      if (s.length === 0) throw new UserError('stop strings must not be empty');
      stopSeqs.push(encode(s));
    } else {
      throw new UserError('stop must be a list of strings or of token ids');
    }
  }
  const seed = p.seed === undefined || p.seed === null ? randomBytes(16).toString('hex') : String(p.seed);
  return { maxTokens, temperature, topK: topK === 0 ? -1 : topK, topP, stopIds, stopSeqs, seed };
}

/** Chooses a token from logits; returns it with its logprob under the distribution it came from. */
export function chooseToken(logits: Float64Array, p: ResolvedParams, rng: Rng): { token: number; logprob: number } {
  const V = logits.length;
  const lp1 = new Float64Array(V);
  logSoftmaxRow(logits, 0, V, lp1);
  if (p.temperature === 0) {
    let best = 0;
    for (let v = 1; v < V; v++) if (logits[v] > logits[best]) best = v;
    return { token: best, logprob: lp1[best] };
  }
  const scaled = new Float64Array(V);
  for (let v = 0; v < V; v++) scaled[v] = logits[v] / p.temperature;
  const lpT = new Float64Array(V);
  logSoftmaxRow(scaled, 0, V, lpT);
  if (p.topK === -1 && p.topP === 1) {
    // Inverse-CDF draw over token ids in order.
    let r = rng.next();
    for (let v = 0; v < V; v++) {
      r -= Math.exp(lpT[v]);
      if (r < 0) return { token: v, logprob: lpT[v] };
    }
    let last = V - 1;
    while (last > 0 && lpT[last] === -Infinity) last--;
    return { token: last, logprob: lpT[last] };
  }
  // Truncate: sort by probability (ties by id), keep top_k, then the smallest prefix with mass >= top_p.
  const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => lpT[b] - lpT[a] || a - b);
  let keep = p.topK > 0 ? Math.min(p.topK, V) : V;
  if (p.topP < 1) {
    let cum = 0;
    for (let i = 0; i < keep; i++) {
      cum += Math.exp(lpT[order[i]]);
      if (cum >= p.topP) { keep = i + 1; break; }
    }
  }
  let mass = 0;
  for (let i = 0; i < keep; i++) mass += Math.exp(lpT[order[i]]);
  const logMass = Math.log(mass);
  let r = rng.next() * mass;
  for (let i = 0; i < keep; i++) {
    r -= Math.exp(lpT[order[i]]);
    if (r < 0) return { token: order[i], logprob: lpT[order[i]] - logMass };
  }
  const tok = order[keep - 1];
  return { token: tok, logprob: lpT[tok] - logMass };
}

function endsWithSeq(gen: number[], seq: number[]): boolean {
  if (gen.length < seq.length) return false;
  for (let i = 0; i < seq.length; i++) if (gen[gen.length - seq.length + i] !== seq[i]) return false;
  return true;
}

/** Stop strings are matched on generated bytes (special tokens as their text), like a decoded-text match. */
function hitStop(gen: number[], last: number, p: ResolvedParams): boolean {
  if (last === EOS_ID || p.stopIds.has(last)) return true;
  if (p.stopSeqs.length === 0) return false;
  const tail = Array.from(decodeBytes(gen.slice(-64)));
  return p.stopSeqs.some((s) => endsWithSeq(tail, s));
}

export function validatePrompt(c: ModelConfig, prompt: number[]): void {
  if (!Array.isArray(prompt) || prompt.length === 0) throw new UserError('prompt must contain at least one token');
  if (prompt.length > c.contextLength) {
    throw new UserError(`prompt has ${prompt.length} tokens; the context length is ${c.contextLength}`);
  }
  for (let i = 0; i < prompt.length; i++) {
    const t = prompt[i];
    if (!Number.isInteger(t) || t < 0 || t >= c.vocabSize) {
      throw new UserError(`prompt token ${i} = ${t} is outside the vocabulary (0..${c.vocabSize - 1})`);
    }
  }
}

/** numSamples continuations of prompt; sample i uses its own stream derived from (seed, i). */
export function sample(c: ModelConfig, L: Layout, P: Float64Array, prompt: number[], params: Partial<SampleParams>,
  numSamples: number): SampledSequence[] {
  validatePrompt(c, prompt);
  const p = resolveParams(params, numSamples);
  const cache = forward(c, L, P, prompt);
  const base: DecodeState = stateFromPrompt(c, cache);
  const firstLogits = cache.logits.slice((prompt.length - 1) * c.vocabSize, prompt.length * c.vocabSize);
  const out: SampledSequence[] = [];
  for (let i = 0; i < numSamples; i++) {
    const rng = new Rng('sample', p.seed, i);
    const st = i === numSamples - 1 ? base : cloneState(base);
    const tokens: number[] = [];
    const logprobs: number[] = [];
    let logits: Float64Array = firstLogits;
    let stopReason: 'stop' | 'length' = 'length';
    while (tokens.length < p.maxTokens && st.tokens.length < c.contextLength + 1) {
      const { token, logprob } = chooseToken(logits, p, rng);
      tokens.push(token);
      logprobs.push(logprob);
      if (hitStop(tokens, token, p)) { stopReason = 'stop'; break; }
      if (tokens.length >= p.maxTokens || st.tokens.length >= c.contextLength) break;
      logits = step(c, L, P, st, token);
    }
    out.push({ tokens, logprobs, stopReason });
  }
  return out;
}

/** [null, log p(t1 | t0), log p(t2 | t0 t1), ...] */
export function promptLogprobs(c: ModelConfig, L: Layout, P: Float64Array, tokens: number[]): Array<number | null> {
  validatePrompt(c, tokens);
  const cache = forward(c, L, P, tokens);
  const row = new Float64Array(c.vocabSize);
  const out: Array<number | null> = [null];
  for (let t = 1; t < tokens.length; t++) {
    logSoftmaxRow(cache.logits, t - 1, c.vocabSize, row);
    out.push(row[tokens[t]]);
  }
  return out;
}
