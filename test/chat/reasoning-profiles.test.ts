// The reasoning table (chat/reasoning-profiles.ts) the proxy checks requests against says what the renderers render:
// every renderer and every recommended renderer has an entry, and for the families whose tokenizers ship offline the
// generation prompt states the entry's effort (gpt-oss's "Reasoning: medium", DeepSeek V4.1's "Reasoning Effort: 75")
// and opens or closes the think block as the entry says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allModels, getRenderer, getTokenizer, RENDERER_NAMES, toInts } from '../../chat';
import { REASONING_PROFILES, reasoningProfile } from '../../chat/reasoning-profiles';

const hi = [{ role: 'user' as const, content: 'hi' }];
const promptText = (renderer: string, model: string) => {
  const tok = getTokenizer(model);
  const input = getRenderer(renderer, tok).buildGenerationPrompt(hi);
  return tok.decode(toInts(input));
};

test('every renderer and every recommended renderer has a reasoning entry', () => {
  for (const name of RENDERER_NAMES) assert.ok(reasoningProfile(name), `${name} has no entry in chat/reasoning-profiles.ts`);
  for (const m of allModels()) for (const name of m.recommendedRenderers) assert.ok(reasoningProfile(name), `${m.name}: ${name}`);
  for (const [name, p] of Object.entries(REASONING_PROFILES)) {
    assert.equal(p.effort !== null, p.accepts.length > 0, `${name}: an effort has its accepted words`);
    if (p.effort) assert.equal(p.accepts[0], p.effort, name);
    if (!p.thinks) assert.equal(p.effort, null, `${name}: no effort without reasoning`);
  }
});

test('gpt-oss: the system prompt states the effort the entry says (none for gpt_oss_no_sysprompt)', () => {
  for (const name of RENDERER_NAMES.filter((n) => n.startsWith('gpt_oss'))) {
    const text = promptText(name, 'openai/gpt-oss-20b');
    const p = reasoningProfile(name)!;
    assert.ok(p.thinks, name);
    if (p.effort) assert.ok(text.includes(`Reasoning: ${p.effort}\n`), `${name}: ${text}`);
    else assert.ok(!text.includes('Reasoning:'), `${name}: ${text}`);
  }
});

test('DeepSeek V4.1: the effort line is the entry\'s (low 50, high 75, max 100); thinking off closes the think block', () => {
  const budget: Record<string, number> = { low: 50, high: 75, max: 100 };
  for (const name of RENDERER_NAMES.filter((n) => n.startsWith('deepseekv4_1'))) {
    const text = promptText(name, 'deepseek-ai/DeepSeek-V4.1-Flash');
    const p = reasoningProfile(name)!;
    if (p.thinks) {
      assert.ok(text.includes(`Reasoning Effort: ${budget[p.effort!]} `), `${name}: ${text}`);
      assert.ok(text.endsWith('<think>'), `${name}: ${text}`);
    } else {
      assert.ok(!text.includes('Reasoning Effort'), `${name}: ${text}`);
      assert.ok(text.endsWith('</think>'), `${name}: ${text}`);
    }
  }
});

test('Qwen3 and DeepSeek V3.1: renderers without reasoning close the think block, thinking ones leave it to the model', () => {
  const cases: [string, string][] = [
    ['qwen3', 'Qwen/Qwen3-8B'],
    ['qwen3_disable_thinking', 'Qwen/Qwen3-8B'],
    ['deepseekv3', 'deepseek-ai/DeepSeek-V3.1'],
    ['deepseekv3_thinking', 'deepseek-ai/DeepSeek-V3.1'],
  ];
  for (const [name, model] of cases) {
    const text = promptText(name, model);
    assert.equal(reasoningProfile(name)!.thinks, !/<\/think>\s*$/.test(text), `${name}: ${JSON.stringify(text.slice(-40))}`);
  }
});
