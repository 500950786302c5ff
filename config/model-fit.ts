// What a run config's model and renderer names can be checked against without asking any service: the renderers
// this project has, the model families whose tokenizer it ships, and which renderer fits which family (a qwen3
// renderer writes Qwen's special tokens, which a Llama or byte tokenizer does not have).
import { recommendedRenderer, RENDERER_NAMES } from '../chat/renderers';
import { tokenizerFamily, UnknownModelError } from '../chat/tokenizers';

const FAMILY_OF_RENDERER: Record<string, 'qwen3' | 'llama3' | null> = {
  role_colon: null,
  llama3: 'llama3',
  qwen3: 'qwen3',
  qwen3_instruct: 'qwen3',
  qwen3_disable_thinking: 'qwen3',
};

/** Problems with `modelName`, `rendererName` and `klReferenceModel.baseModel`, each with its field path. */
export function modelProblems(cfg: { modelName: string; rendererName: string; klReferenceModel?: { baseModel: string } | null }): string[] {
  const problems: string[] = [];
  const familyOf = (field: string, model: string) => {
    try {
      return tokenizerFamily(model);
    } catch (err) {
      if (!(err instanceof UnknownModelError)) throw err;
      problems.push(`${field}: ${err.message}`);
      return undefined;
    }
  };
  const family = familyOf('modelName', cfg.modelName);
  if (cfg.klReferenceModel) familyOf('klReferenceModel.baseModel', cfg.klReferenceModel.baseModel);
  if (!(cfg.rendererName in FAMILY_OF_RENDERER)) {
    problems.push(`rendererName: unknown renderer ${JSON.stringify(cfg.rendererName)} (known: ${RENDERER_NAMES.join(', ')})`);
  } else {
    const needs = FAMILY_OF_RENDERER[cfg.rendererName];
    if (needs && family && family !== needs) {
      problems.push(`rendererName: ${cfg.rendererName} renders ${needs === 'qwen3' ? 'Qwen3' : 'Llama 3'} chat tokens, which ${cfg.modelName} does not have (its renderer: ${recommendedRenderer(cfg.modelName)})`);
    }
  }
  return problems;
}
