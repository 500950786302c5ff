// Reasoning settings of a request (Responses `reasoning.effort`, Chat `reasoning_effort` and vLLM's
// `chat_template_kwargs.enable_thinking`, Anthropic `thinking` and `output_config.effort`), checked against the run's
// renderer once the call's policy is known. A renderer's reasoning is fixed by its name and trained as rendered, so
// a setting it already renders is accepted and any other is refused with the renderer that would render it: never
// silently ignored, never honoured by rendering something the run does not train.
import { quote } from '../../common/front-door';
import { describeReasoning, familyRenderers, reasoningProfile, type ReasoningProfile } from '../../chat/reasoning-profiles';
import { recommendedRenderers } from '../../chat';
import { badRequest } from '../errors';

/** The cookbook's recommended renderers for a model it knows; null for one it does not (local models, fine-tunes). */
function recommendedFor(model: string): readonly string[] | null {
  try {
    return recommendedRenderers(model);
  } catch {
    return null;
  }
}

/** One reasoning setting a request asked for. */
export type ReasoningAsk =
  /** An effort word ("none", "low", ..., "xhigh", "max"); "none" asks for no reasoning. */
  | { param: string; effort: string }
  /** Thinking on (Anthropic enabled/adaptive, enable_thinking true) or off, without an effort. */
  | { param: string; thinking: boolean };

/** Effort words the front doors take: OpenAI's, plus "max" (Anthropic's output_config, DeepSeek and GLM templates). */
export const EFFORT_WORDS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/** An effort field's value: one of EFFORT_WORDS, or null/absent (no ask). */
export function effortAsk(v: unknown, param: string): ReasoningAsk | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !(EFFORT_WORDS as readonly string[]).includes(v)) {
    throw badRequest(`${param} must be one of ${EFFORT_WORDS.join(', ')}, got ${quote(v)}`, param, 'invalid_value');
  }
  return { param, effort: v };
}

function fits(p: ReasoningProfile, ask: ReasoningAsk): boolean {
  if ('thinking' in ask) return p.thinks === ask.thinking;
  if (ask.effort === 'none') return !p.thinks;
  return p.thinks && p.accepts.includes(ask.effort);
}

function asked(ask: ReasoningAsk): string {
  if ('thinking' in ask) return ask.thinking ? 'thinking on' : 'thinking off';
  return ask.effort === 'none' ? 'no reasoning (effort none)' : `reasoning effort ${ask.effort}`;
}

/**
 * Throws a 400 naming the run's renderer, what it renders and which renderer renders what was asked, unless every
 * ask is what `renderer` renders.
 */
export function checkReasoning(asks: readonly ReasoningAsk[], renderer: string, model?: string): void {
  for (const ask of asks) {
    const p = reasoningProfile(renderer);
    if (!p) {
      throw badRequest(`${ask.param}: the run's renderer ${renderer} has no known reasoning setting, so ${asked(ask)} cannot be checked; leave ${ask.param} out`, ask.param, 'unsupported_value');
    }
    if (fits(p, ask)) continue;
    const others = familyRenderers(p.family, (q) => fits(q, ask));
    // Renderers recommended for the run's model first; the family's others get the cookbook's warning.
    const recommended = model ? recommendedFor(model) : null;
    const preferred = recommended ? others.filter((n) => recommended.includes(n)) : others;
    const names = preferred.length ? preferred : others;
    const warned = recommended && !preferred.length && others.length ? ` (not among ${model}'s recommended renderers)` : '';
    const instead = names.length ? `a run with renderer ${names.join(' or ')}${warned} renders ${asked(ask)}` : `no ${p.family} renderer renders ${asked(ask)}`;
    throw badRequest(
      `${ask.param}: ${asked(ask)} cannot be honoured: the run's renderer ${renderer} renders ${describeReasoning(p)} and trains on what it renders; ${instead} (the renderer is chosen by the run config); leave ${ask.param} out or ask for what it renders`,
      ask.param,
      'unsupported_value',
    );
  }
}

/** The effort a renderer states, for a response to echo (null when it states none or does not reason). */
export function renderedEffort(renderer: string | undefined): string | null {
  const p = renderer ? reasoningProfile(renderer) : null;
  return p?.thinks ? p.effort : null;
}
