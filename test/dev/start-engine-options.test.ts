// npm start's engine flags (dev/start-options.ts): each mistake is one line naming the flag, before anything starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { parseStartOptions } from '../../dev/start-options';

const ROOT = path.resolve(__dirname, '..', '..');
const parse = (...argv: string[]) => parseStartOptions(argv, {}, ROOT);

test('engine flags: --gpu reaches the engine for jax; stray and wrong flags are one line each', () => {
  const o = parse('--engine', 'skyrl', '--model', 'tiny-qwen3', '--gpu');
  assert.equal(o.engine?.gpu, true);
  assert.equal(o.engine?.backend, 'jax');
  assert.equal(parse('--engine', 'skyrl', '--model', 'tiny-qwen3').engine?.gpu, false);
  const refused: [string[], RegExp][] = [
    [['--gpu'], /^npm start: --gpu goes with --engine skyrl$/],
    [['--backend', 'jax', '--gpu'], /^npm start: --backend and --gpu go with --engine skyrl$/],
    [['--engine', 'skyrl', '--model', 'Qwen/Qwen3-8B', '--backend', 'fsdp', '--gpu'], /^npm start: --gpu is for --backend jax \(fsdp runs on GPUs already/],
    [['--engine', 'skyrl', '--model', 'Qwen/Qwen3-8B', '--backend', 'torch'], /^npm start: --backend must be one of jax, fsdp, megatron, got "torch"$/],
    [['--engine', 'skyrl'], /^npm start --engine skyrl: --model is not given/],
    [['--engine', 'skyrl', '--model', '/models/qwen3-8b'], /^npm start: --model \/models\/qwen3-8b is a directory; give the registry name .* --checkpoint-path \/models\/qwen3-8b\)$/],
  ];
  for (const [argv, message] of refused) {
    assert.throws(() => parse(...argv), (err: Error) => {
      assert.match(err.message, message, argv.join(' '));
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
  }
});
