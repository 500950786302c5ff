// `client render` says which of its two modes it ran: its --help states both (the sampling prompt without
// --supervised, the training example with it), and a conversation ending with an assistant message rendered
// without --supervised gets a note that the message was made part of a prompt, not trained on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { client } from '../helpers/commands';

test('client --help states both modes of render with an example', { timeout: 60_000 }, async () => {
  const r = await client(['--help']);
  assert.equal(r.code, 0, r.stderr);
  const help = r.stdout.slice(r.stdout.indexOf('  render '), r.stdout.indexOf('  tokenizer fetch'));
  assert.match(help.replace(/\s+/g, ' '), /without --supervised, the sampling prompt: every message of FILE \(a last assistant message too\), then the start of a new assistant turn/);
  assert.match(help.replace(/\s+/g, ' '), /with --supervised, the training example: the conversation as trained, \{"tokens": \[\.\.\.\], "weights": \[\.\.\.\]\}/);
  assert.match(help.replace(/\s+/g, ' '), /E\.g\. npm run client -- render --model Qwen\/Qwen3-8B --supervised --text docs\/chat-example\.json/);
});

test('render without --supervised of a conversation ending with an assistant message says what it rendered', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'agl-render-modes-'));
  const ended = path.join(dir, 'ended.json');
  writeFileSync(ended, JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello.' }] }));
  const open = path.join(dir, 'open.json');
  writeFileSync(open, JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }));

  const prompt = await client(['render', '--model', 'Qwen/Qwen3-8B', ended]);
  assert.equal(prompt.code, 0, prompt.stderr);
  assert.equal(prompt.stderr, 'note: rendered as a sampling prompt: every message, the last assistant one too, then the start of a new assistant turn; --supervised renders the conversation as a training example (tokens and weights)\n');
  const sup = await client(['render', '--model', 'Qwen/Qwen3-8B', '--supervised', ended]);
  assert.equal([sup.code, sup.stderr].join(' '), '0 ', 'the training example needs no note');
  const plain = await client(['render', '--model', 'Qwen/Qwen3-8B', open]);
  assert.equal([plain.code, plain.stderr].join(' '), '0 ', 'a conversation awaiting its answer needs no note');
});
