// What a run config's model and renderer names can be checked against without asking any service: the models
// tinker-cookbook's registry knows (model_info.py) and their recommended renderers, the renderers this project
// has, and whether the renderer can work with the model's tokenizer when that tokenizer is at hand offline (a
// qwen3 renderer needs Qwen's special tokens, which a Llama or byte tokenizer does not have).
import { getModelInfo, rendererWarning, UnknownModelError } from '../chat/models';
import { getRenderer, isRendererName, RENDERER_NAMES, UNAVAILABLE_RENDERERS } from '../chat/renderers';
import { getTokenizer } from '../chat/tokenizers';
import type { Tokenizer } from '../chat/types';

function offlineTokenizer(model: string): Tokenizer | null {
  try {
    return getTokenizer(model);
  } catch (err) {
    if (err instanceof UnknownModelError) return null;
    throw err;
  }
}

/** Problems with `modelName`, `rendererName` and `klReferenceModel.baseModel`, each with its field path. */
export function modelProblems(cfg: { modelName: string; rendererName: string; klReferenceModel?: { baseModel: string } | null }): string[] {
  const problems: string[] = [];
  const known = (field: string, model: string) => {
    try {
      getModelInfo(model);
    } catch (err) {
      if (!(err instanceof UnknownModelError)) throw err;
      problems.push(`${field}: ${err.message}`);
    }
  };
  known('modelName', cfg.modelName);
  if (cfg.klReferenceModel) known('klReferenceModel.baseModel', cfg.klReferenceModel.baseModel);
  const unavailable = UNAVAILABLE_RENDERERS[cfg.rendererName];
  if (unavailable) {
    problems.push(`rendererName: ${cfg.rendererName} is not available here: ${unavailable}`);
    return problems;
  }
  if (!isRendererName(cfg.rendererName)) {
    problems.push(`rendererName: unknown renderer ${JSON.stringify(cfg.rendererName)} (known: ${RENDERER_NAMES.join(', ')})`);
    return problems;
  }
  const tok = offlineTokenizer(cfg.modelName);
  if (tok) {
    try {
      getRenderer(cfg.rendererName, tok);
    } catch (err) {
      problems.push(`rendererName: ${cfg.rendererName} cannot render for ${cfg.modelName}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** The cookbook's warning for a renderer its registry does not recommend for the model; null when fine. */
export function modelWarning(cfg: { modelName: string; rendererName: string }): string | null {
  return rendererWarning(cfg.modelName, cfg.rendererName);
}
