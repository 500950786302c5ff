// Kimi K2 / K2.5 / K2.6, GLM-5.3 and Nemotron 3 renderers against tinker-cookbook 0.6.1 itself: every renderer
// name of these families, every conversation of corpus.json, generation prompts, supervised examples and their
// weights for every TrainOnWhat (and the errors the cookbook raises), stop sequences, tool declarations, and
// parses of raw responses. expected.json.gz is written by make_fixtures.py (the cookbook renders, the script
// records); both sides load the same test tokenizer files (test/helpers/test-tokenizers.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { toInts } from '../../../chat/model-input';
import type { FunctionSpec, Message, ModelInput, Renderer, SupervisedExample, Tokenizer, TrainOnWhat } from '../../../chat/types';
import type { RendererOptions } from '../../../chat/renderers/registry-types';
import { getRenderer } from '../../../chat/renderers/registry';
import { loadFamilyTestTokenizers } from './tokenizers';

interface Err {
  error: string;
  message: string;
}
type Ex = { tokens: number[]; weights: [number, number][] };
interface Expected {
  stop: number[];
  extension: boolean;
  prefix: { with_system: Message[] | Err; without_system: Message[] | Err };
  conversations: Record<
    string,
    {
      messages: Message[];
      prompts: ({ at: number } & ({ tokens: number[] } | Err))[];
      supervised: Record<string, { example: Ex | Err; examples: Ex[] | Err }>;
    }
  >;
  responses: ({ id: string; variant: string; tokens: number[] } & ({ message: Message; termination: string } | Err))[];
  images: Record<string, Record<string, unknown> & { prompts: ({ at: number } & ({ chunks: ChunkJson[] } | Err))[] }>;
}
type ChunkJson = { tokens: number[] } | { image: number };

const fixtures = JSON.parse(gunzipSync(readFileSync(path.join(__dirname, 'expected.json.gz'))).toString('utf8')) as {
  renderers: Record<string, Expected>;
  tokenizers: Record<'kimi' | 'glm5' | 'nemotron3', { ids: number[][]; decoded: string[]; decoded_prefixes: string[][] }>;
};
const expected = fixtures.renderers;
const corpus = JSON.parse(readFileSync(path.join(__dirname, 'corpus.json'), 'utf8')) as {
  texts: string[];
  tools: FunctionSpec[];
  image_conversations: { id: string; messages: Message[] }[];
  conversations: { id: string; tools?: boolean; system?: string; trainable?: boolean[]; messages: Message[] }[];
};

const isErr = (x: unknown): x is Err => typeof x === 'object' && x !== null && 'error' in x && !Array.isArray(x);
const plain = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;
const expand = (runs: [number, number][]): number[] => runs.flatMap(([w, n]) => Array<number>(n).fill(w));
const got = (ex: SupervisedExample): { tokens: number[]; weights: number[] } => ({ tokens: toInts(ex.modelInput), weights: ex.weights });

function familyOf(name: string): 'kimi' | 'glm5' | 'nemotron3' {
  return name.startsWith('kimi') ? 'kimi' : name.startsWith('glm') ? 'glm5' : 'nemotron3';
}

function outcome<T>(f: () => T): T | Err {
  try {
    return f();
  } catch (e) {
    return { error: (e as Error).name, message: (e as Error).message };
  }
}

/** Both raised, or both produced equal values. */
function same(actual: unknown, want: unknown, what: string): void {
  if (isErr(want)) {
    assert.ok(isErr(actual), `${what}: the cookbook raised ${want.error} (${want.message}) but we returned a result`);
    return;
  }
  assert.ok(!isErr(actual), `${what}: we raised ${isErr(actual) ? actual.message : ''} but the cookbook returned a result`);
  assert.deepEqual(plain(actual), want, what);
}

const tokenizers = loadFamilyTestTokenizers();

/** Stands in for the vision processor as make_fixtures.py's stub does: every image takes 7 tokens. */
const stubImages: RendererOptions = { imageProcessor: { imageChunk: () => ({ type: 'image', data: '', format: 'jpeg', expected_tokens: 7 }) } };
const chunksJson = (m: ModelInput): ChunkJson[] => m.chunks.map((c) => (c.type === 'encoded_text' ? { tokens: c.tokens } : { image: c.expected_tokens }));

for (const [name, want] of Object.entries(expected)) {
  test(`${name}: prompts, supervised examples, stops, tools and parses as tinker-cookbook 0.6.1`, () => {
    const tok: Tokenizer = tokenizers[familyOf(name)];
    const r: Renderer = getRenderer(name, tok, stubImages);
    assert.deepEqual(r.getStopSequences(), want.stop, 'stop sequences');
    assert.equal(r.hasExtensionProperty, want.extension, 'has_extension_property');
    same(outcome(() => r.createConversationPrefixWithTools!(corpus.tools, 'Be brief.')), want.prefix.with_system, 'tool prefix with system');
    same(outcome(() => r.createConversationPrefixWithTools!(corpus.tools)), want.prefix.without_system, 'tool prefix without system');

    for (const conv of corpus.conversations) {
      const w = want.conversations[conv.id]!;
      let messages: Message[] = plain(conv.messages);
      if (conv.trainable) messages = messages.map((m, i) => ({ ...m, trainable: conv.trainable![i] }));
      if (conv.tools) messages = [...r.createConversationPrefixWithTools!(corpus.tools, conv.system ?? ''), ...messages];
      else if (conv.system) messages = [{ role: 'system', content: conv.system }, ...messages];
      assert.deepEqual(plain(messages), w.messages, `${conv.id}: messages with the tool prefix`);
      const base = messages.map(({ trainable: _t, ...m }) => m as Message);

      for (const p of w.prompts) {
        same(outcome(() => toInts(r.buildGenerationPrompt(base.slice(0, p.at)))), 'tokens' in p ? p.tokens : p, `${conv.id}: generation prompt before message ${p.at}`);
      }
      for (const [mode, s] of Object.entries(w.supervised)) {
        const one = outcome(() => got(r.buildSupervisedExample(messages, mode as TrainOnWhat)));
        same(one, isErr(s.example) ? s.example : { tokens: s.example.tokens, weights: expand(s.example.weights) }, `${conv.id}: supervised example, ${mode}`);
        const many = outcome(() => r.buildSupervisedExamples(messages, mode as TrainOnWhat).map(got));
        same(many, isErr(s.examples) ? s.examples : s.examples.map((e) => ({ tokens: e.tokens, weights: expand(e.weights) })), `${conv.id}: supervised examples, ${mode}`);
      }
    }

    for (const conv of corpus.image_conversations) {
      const w = want.images[conv.id]!;
      for (const p of w.prompts) {
        same(outcome(() => chunksJson(r.buildGenerationPrompt(conv.messages.slice(0, p.at)))), 'chunks' in p ? p.chunks : p, `${conv.id}: prompt chunks before message ${p.at}`);
      }
      for (const mode of ['last_assistant_message', 'all_assistant_messages'] as const) {
        const e = w[mode] as { chunks: ChunkJson[]; weights: [number, number][] } | Err;
        const ours = outcome(() => {
          const ex = r.buildSupervisedExample(conv.messages, mode);
          return { chunks: chunksJson(ex.modelInput), weights: ex.weights };
        });
        same(ours, isErr(e) ? e : { chunks: e.chunks, weights: expand(e.weights) }, `${conv.id}: supervised chunks and weights, ${mode}`);
      }
    }

    for (const resp of want.responses) {
      const res = outcome(() => r.parseResponse(resp.tokens));
      const w = isErr(resp) ? resp : { message: resp.message, termination: resp.termination };
      same(res, w, `parse ${resp.id} (${resp.variant})`);
    }
  });
}

for (const family of ['kimi', 'glm5', 'nemotron3'] as const) {
  test(`${family} test tokenizer: encode and decode (of every prefix of the short texts, cut UTF-8 included; Kimi's cuts of long texts) as the Python tokenizer`, () => {
    const tok = tokenizers[family];
    const want = fixtures.tokenizers[family];
    corpus.texts.forEach((text, i) => {
      assert.deepEqual(tok.encode(text), want.ids[i], `encode ${JSON.stringify(text.slice(0, 80))}`);
      assert.equal(tok.decode(want.ids[i]!), want.decoded[i], `decode ${JSON.stringify(text.slice(0, 80))}`);
      want.decoded_prefixes[i]!.forEach((d, k) => assert.equal(tok.decode(want.ids[i]!.slice(0, k)), d, `decode ${k} ids of ${JSON.stringify(text)}`));
    });
  });
}

test('the fixtures cover every renderer name of the three families', () => {
  assert.deepEqual(Object.keys(expected).sort(), [
    'glm5_3_high_reasoning', 'glm5_3_low_reasoning', 'glm5_3_max_reasoning',
    'kimi_k2', 'kimi_k25', 'kimi_k25_disable_thinking', 'kimi_k26', 'kimi_k26_disable_thinking', 'kimi_k26_preserve_thinking',
    'nemotron3', 'nemotron3_disable_thinking', 'nemotron3_low_thinking', 'nemotron3_preserve_thinking',
    'nemotron3_ultra', 'nemotron3_ultra_disable_thinking', 'nemotron3_ultra_medium_thinking', 'nemotron3_ultra_preserve_thinking',
  ]);
});
