// The Python Agent-lightning 1.0.2 environment for the gateway interop test: the real `agl-controller` and the
// `openai` package the example agent uses. Agent-lightning 1.0.x requires Python >= 3.12 (pip on an older Python
// does not even list it), so the venv is made with pyenv's 3.12.1.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureVenv, type Venv } from '../helpers/python';

export const AGL1_PACKAGES = ['agentlightning==1.0.2', 'openai==3.57.0'];

export const PYTHON_312 = process.env.AGL_PYTHON312 ?? path.join(os.homedir(), '.pyenv', 'versions', '3.12.1', 'bin', 'python3');

export async function agl1Venv(): Promise<Venv> {
  if (!existsSync(PYTHON_312)) {
    throw new Error(`Agent-lightning 1.0.2 needs Python >= 3.12: ${PYTHON_312} does not exist (set AGL_PYTHON312 to a Python 3.12 interpreter)`);
  }
  return ensureVenv('agl-1.0', AGL1_PACKAGES, PYTHON_312);
}
