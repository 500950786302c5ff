// local/tiny-hello-tools learns the hello forms after the AI SDK example's tool declaration: its corpus's system
// turn is, byte for byte, what role_colon_tools renders for the example's request (helloAgentWorkflow's one tool, as
// @ai-sdk/openai sends it and the proxy converts it), so the example's prompts are the model's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getRenderer, getTokenizer } from '../../../chat';
import { withToolDeclarations } from '../../../chat/tools';
import { helloPrompt } from '../../../agents/examples/hello-task';
import { HELLO_TOOLS_SYSTEM, rolePrompt } from '../../../trainer/model/corpus';
import { recipeFor } from '../../../trainer/model/base-models';

test("local/tiny-hello-tools' corpus starts with the system turn role_colon_tools renders for the AI SDK example", async () => {
  const tok = await getTokenizer('local/tiny-hello-tools');
  const r = getRenderer('role_colon_tools', tok);
  // What @ai-sdk/openai sends for the workflow's `greeting` tool (agents/examples/ai-sdk/workflows.ts).
  const tool = {
    type: 'function',
    function: { name: 'greeting', description: 'How someone introduces themselves.', parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }, strict: false },
  };
  const msgs = withToolDeclarations(r, [{ role: 'user', content: helloPrompt('1234') }], [tool as never]);
  const prompt = r.buildGenerationPrompt(msgs).chunks.flatMap((c) => (c.type === 'encoded_text' ? c.tokens : []));
  assert.equal(tok.decode(prompt), `<|bos|>${HELLO_TOOLS_SYSTEM}${rolePrompt(helloPrompt('1234'))}`);
  assert.ok(prompt.length + 24 <= recipeFor('local/tiny-hello-tools').config.contextLength, 'the prompt and the answer fit the context');
});
