// Properties over random input (fast-check): BPE encode/decode round trips byte-exactly (Qwen3 after NFC,
// which its normalizer applies), rendered prompts decode to the template text, Python-style JSON parses back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getRenderer, getTokenizer, toInts } from '../../chat';
import { pyJsonDumps } from '../../python';
import { pyCapitalize } from '../../chat/renderers/role-colon';

/** Lone surrogates replaced by U+FFFD (String.prototype.toWellFormed, not in the ES2023 lib typings). */
const wellFormed = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

const qwen = getTokenizer('Qwen/Qwen3-8B');
const llama = getTokenizer('meta-llama/Llama-3.1-8B-Instruct');
const text = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.string({ maxLength: 60 }));

test('decode(encode(s)) is s (Llama 3) and NFC(s) (Qwen3), for any string', () => {
  fc.assert(
    fc.property(text, (s) => {
      const wf = wellFormed(s);
      assert.equal(llama.decode(llama.encode(wf)), wf);
      assert.equal(qwen.decode(qwen.encode(wf)), wf.normalize('NFC'));
    }),
    { numRuns: 400 },
  );
});

test('token bytes concatenate to the UTF-8 of the text', () => {
  fc.assert(
    fc.property(text, (s) => {
      const wf = wellFormed(s);
      const bytes = Buffer.concat(llama.encode(wf).map((id) => Buffer.from(llama.tokenBytes(id))));
      assert.deepEqual(bytes, Buffer.from(wf, 'utf8'));
    }),
    { numRuns: 200 },
  );
});

const message = fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'tool'), content: fc.string({ maxLength: 40 }).map((s) => wellFormed(s)) });

test('role_colon and qwen3_instruct prompts decode to the template text', () => {
  const rc = getRenderer('role_colon', llama);
  const qi = getRenderer('qwen3_instruct', qwen);
  fc.assert(
    fc.property(fc.array(message, { maxLength: 5 }), (msgs) => {
      const clean = msgs.map((m) => ({ ...m, content: m.content.replace(/<\|[a-z_]+\|>/g, '') }));
      const roleColon = '<|begin_of_text|>' + clean.map((m) => `${pyCapitalize(m.role)}: ${m.content}\n\n`).join('') + 'Assistant:';
      assert.equal(llama.decode(toInts(rc.buildGenerationPrompt(clean))), roleColon);
      const qwenText = clean.map((m, i) => `${i ? '\n' : ''}<|im_start|>${m.role === 'tool' ? 'user' : m.role}\n${m.role === 'tool' ? `<tool_response>\n${m.content}\n</tool_response>` : m.content}<|im_end|>`).join('') + `${clean.length ? '\n' : ''}<|im_start|>assistant\n`;
      assert.equal(qwen.decode(toInts(qi.buildGenerationPrompt(clean))), qwenText.normalize('NFC'));
    }),
    { numRuns: 200 },
  );
});

test('pyJsonDumps output parses back to the same value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const norm = JSON.parse(JSON.stringify(v)); // -0 and the like, as JSON carries them
      assert.deepEqual(JSON.parse(pyJsonDumps(norm)), norm);
      assert.deepEqual(JSON.parse(pyJsonDumps(norm, { ensureAscii: false })), norm);
      assert.ok(/^[\x20-\x7e]*$/.test(pyJsonDumps(norm)), 'ensure_ascii output is printable ASCII');
    }),
    { numRuns: 300 },
  );
});
