// Every model of tinker-cookbook 0.6.1's registry (model_info.py) against `validate`: with its recommended renderer
// it is accepted (hosted baseUrl: nothing asks the service); a renderer the registry does not recommend passes with
// the cookbook's warning, word for word; an unknown model is an error saying to name a renderer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { allModels, getTokenizer, recommendedRenderer, recommendedRenderers, rendererWarning, RENDERER_NAMES } from '../../chat';
import { UNAVAILABLE_RENDERERS } from '../../chat/renderers';
import { ConfigError } from '../../config/errors';
import { validateRunConfig } from '../../config/load';
import { modelWarning } from '../../config/model-fit';
import { client } from '../helpers/commands';

const scratch = mkdtempSync(path.join(process.env.AGL_TEST_SCRATCH ?? os.tmpdir(), 'agl-registry-models-'));
const config = (over: Record<string, unknown>) => ({
  learningRate: 1e-3,
  datasetBuilder: { batchSize: 2, trainDataset: ['a', 'b'] },
  logPath: path.join(scratch, 'runs', 'r'),
  baseUrl: null,
  ...over,
});

function problemsOf(over: Record<string, unknown>): string[] {
  try {
    validateRunConfig(config(over));
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err.problems;
  }
}

test('the registry is model_info.py: 46 models, with the recommended renderers of a few checked by hand', () => {
  assert.equal(allModels().length, 46);
  assert.deepEqual(recommendedRenderers('openai/gpt-oss-20b'), ['gpt_oss_no_sysprompt', 'gpt_oss_medium_reasoning']);
  assert.deepEqual(recommendedRenderers('Qwen/Qwen3-8B:peft:1'), ['qwen3', 'qwen3_disable_thinking']);
  assert.equal(recommendedRenderer('deepseek-ai/DeepSeek-V3.1-Base'), 'role_colon');
  assert.equal(recommendedRenderer('thinkingmachines/Inkling-3'), 'tml_v0', 'any Inkling* falls back to tml_v0, as the cookbook does');
  assert.deepEqual(recommendedRenderers('nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16').at(-1), 'nemotron3_low_thinking');
});

test('validate accepts every registry model with its recommended renderer, once that renderer is registered', () => {
  const notRegistered: string[] = [];
  for (const m of allModels()) {
    const renderer = m.recommendedRenderers[0]!;
    const problems = problemsOf({ modelName: m.name, rendererName: renderer });
    if (RENDERER_NAMES.includes(renderer)) assert.deepEqual(problems, [], `${m.name} with ${renderer}`);
    else if (UNAVAILABLE_RENDERERS[renderer]) {
      assert.equal(problems.length, 1, `${m.name}: one problem`);
      assert.match(problems[0]!, new RegExp(`^rendererName: ${renderer} is not available here: .*tml-renderers >= 0\\.4\\.1.*PyPI does not have.*would unblock`), `${m.name}: says why and what would unblock it`);
      assert.doesNotMatch(problems[0]!, /\n/, 'one line');
      notRegistered.push(`${m.name} (${renderer})`);
    } else {
      assert.match(problems.join('\n'), new RegExp(`^rendererName: unknown renderer "${renderer}"`), `${m.name}: refused only for its renderer`);
      notRegistered.push(`${m.name} (${renderer})`);
    }
    assert.equal(modelWarning({ modelName: m.name, rendererName: renderer }), null, `${m.name}: its own renderer gets no warning`);
  }
  if (notRegistered.length) process.stderr.write(`registry models whose default renderer this branch does not have yet: ${notRegistered.join(', ')}\n`);
});

test('Inkling: validated with tml_v0 and tokenized offline (o200k_base_chat); Inkling-2-Small and Kimi K3.1 Pro say why not', () => {
  for (const model of ['thinkingmachines/Inkling', 'thinkingmachines/Inkling-Small', 'thinkingmachines/Inkling-2-Small', 'thinkingmachines/Inkling-9']) {
    assert.deepEqual(problemsOf({ modelName: model, rendererName: 'tml_v0' }), [], model);
  }
  const tok = getTokenizer('thinkingmachines/Inkling-Small');
  assert.deepEqual(tok.encode('Be brief.'), [3238, 14567, 13], 'o200k_base ids');
  assert.equal(tok.tokenId('<|content_model_end_sampling|>'), 200006);
  // h200k_base_chat is not in tml-renderers 0.2.1: the model validates (hosted), but no tokenizer is made up for it.
  assert.throws(() => getTokenizer('thinkingmachines/Inkling-2-Small'), /^UnknownModelError: model "thinkingmachines\/Inkling-2-Small": its tokenizer \(h200k_base_chat\) ships only in tml-renderers >= 0\.4\.1.*would unblock this model$/);
  assert.throws(() => getTokenizer('moonshotai/Kimi-K3.1-Pro'), /Kimi K3\) and renderer ship only in tml-renderers >= 0\.4\.1/);
});

test('a renderer the registry does not recommend: the cookbook warning, word for word; an unknown model: no warning', () => {
  assert.equal(
    rendererWarning('Qwen/Qwen3-8B', 'qwen3_instruct'),
    "Renderer 'qwen3_instruct' is not recommended for model 'Qwen/Qwen3-8B'. Recommended renderer(s): 'qwen3', 'qwen3_disable_thinking'. " +
      'Using an incompatible renderer can silently degrade training quality (e.g., prefilling tokens the model was never trained on).',
  );
  assert.equal(rendererWarning('Qwen/Qwen3-8B', 'qwen3_disable_thinking'), null);
  assert.equal(rendererWarning('acme/Unknown-1B', 'role_colon'), null);
  assert.deepEqual(problemsOf({ modelName: 'Qwen/Qwen3-8B', rendererName: 'qwen3_instruct' }), [], 'a warning, not a problem');
  assert.match(problemsOf({ modelName: 'acme/Unknown-1B', rendererName: 'role_colon' })[0]!, /^modelName: unknown model "acme\/Unknown-1B": .*name one with rendererName/);
});

test('client validate prints the warning on stderr and still passes', async () => {
  const file = path.join(scratch, 'warn.run.json');
  writeFileSync(file, JSON.stringify(config({ modelName: 'Qwen/Qwen3-8B', rendererName: 'qwen3_instruct', baseUrl: 'http://127.0.0.1:9' })));
  const r = await client(['validate', file], { ...process.env, TINKER_API_KEY: 'tml-test', TINKER_BASE_URL: '' });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^warning: Renderer 'qwen3_instruct' is not recommended for model 'Qwen\/Qwen3-8B'\. Recommended renderer\(s\): 'qwen3', 'qwen3_disable_thinking'\./m);
  assert.match(r.stdout, /valid/);
});
