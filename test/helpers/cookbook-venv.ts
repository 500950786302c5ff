// The tinker-cookbook 0.6.1 venv for renderer parity: tinker 0.38 and what the renderers import (transformers for
// tokenizers, pillow, pydantic, numpy, tiktoken for Kimi, tml-renderers 0.2.1 for tml_v0), then tinker-cookbook with --no-deps (it pins
// tml-renderers>=0.4.1, which PyPI does not have). torch is a list-backed stand-in kept in this repo
// (test/chat/parity/torch-stub): the renderers use it only for 1-D weight vectors, and PyPI's x86_64 torch needs
// ~3 GB of CUDA wheels to import. Built once in the user's cache (helpers/python.ts) and reused (pip's cache makes a
// rebuild quick).
import path from 'node:path';
import { ensureVenv, type Venv } from './python';

export const COOKBOOK_PACKAGES = [
  'tinker==0.38.0',
  'transformers==5.25.0',
  'tokenizers==0.23.3',
  'pillow==13.0.0',
  'pydantic==2.14.4',
  'numpy==2.4.6',
  'tiktoken==0.14.0',
  'jinja2==3.1.6',
  // tml_v0 (Inkling): PyPI's tml-renderers 0.2.1 (the cookbook pins >=0.4.1, which PyPI does not have); its native
  // side needs libtorch loaded first (helpers/libtorch-cpu.ts).
  'tml-renderers==0.2.1',
];
export const COOKBOOK = 'tinker-cookbook==0.6.1';
export const TORCH_STUB_DIR = path.resolve(__dirname, '..', 'chat', 'parity', 'torch-stub');

export const cookbookVenv = (): Promise<Venv> => ensureVenv('cookbook-0.6.1', COOKBOOK_PACKAGES, 'python3', { noDeps: [COOKBOOK], paths: [TORCH_STUB_DIR] });
