// Bodies and query parameters of the 1.0 routes, as upstream's pydantic models and FastAPI parameters take them.
// A mistake answers 422 with FastAPI's shape: {"detail": [{"loc": [...], "msg": ..., "type": ...}]}.
import { z } from 'zod';
import { ValidationError } from '../errors';
import { STATES, type State } from './types';

const state = z.enum(STATES as [State, ...State[]]);
const int = z.number().int('must be an integer');

const LaunchLocal = z.object({ agent_class: z.string().nullable().optional(), env_map: z.record(z.string(), z.string()).optional() });
const LaunchK8s = z.object({ job_template: z.string().nullable().optional() });

export const RolloutCreateSchema = z.object({
  input: z.unknown().refine((v) => v !== undefined, 'Field required'),
  is_train: z.boolean().default(true),
  config: z.object({
    timeout_seconds: int.min(1, 'must be at least 1').default(3600),
    local: LaunchLocal.nullable().optional().transform((l) => (l ? { agent_class: l.agent_class ?? null, env_map: l.env_map ?? {} } : null)),
    k8s: LaunchK8s.nullable().optional().transform((k) => (k ? { job_template: k.job_template ?? null } : null)),
  }).nullable().default(null),
  metadata: z.record(z.string(), z.unknown()).nullable().default(null),
  // Ids go into URL paths (/api/rollouts/{id}): a '/' could never be addressed.
  rollout_id: z.string().refine((v) => !v.includes('/'), "must not contain '/'").nullable().default(null),
});
export const RolloutCreateListSchema = z.array(RolloutCreateSchema);

export const RolloutPatchSchema = z.object({
  status: z.strictObject({
    state: state.nullable().optional(),
    k8s_job_name: z.string().nullable().optional(),
    last_attempt_id: z.string().nullable().optional(),
    error_message: z.string().nullable().optional(),
  }).nullable().optional(),
});

export const EventCreateSchema = z.object({
  event_type: z.string(),
  data: z.record(z.string(), z.unknown()).default({}),
});

export const ModelListSchema = z.array(z.object({ model: z.string(), endpoint: z.string(), version: int.default(0) }));

export const PauseSchema = z.object({
  retry_after_seconds: int.min(0, 'must not be negative').default(5),
  reason: z.string().nullable().default(null),
});

/** Validates a body; throws FastAPI's 422 naming each wrong field. */
export function body<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw invalid(r.error.issues.map((i) => ({ loc: ['body', ...i.path.map(String)], msg: i.message, type: i.code })));
}

function invalid(issues: { loc: (string | number)[]; msg: string; type: string }[]): ValidationError {
  const summary = issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ');
  return new ValidationError(`Invalid request: ${summary}`, issues);
}

/** An integer query parameter (FastAPI's int), or its default. */
export function intParam(q: URLSearchParams, name: string, fallback: number): number {
  const v = q.get(name);
  if (v === null) return fallback;
  if (!/^[+-]?\d+$/.test(v.trim())) throw invalid([{ loc: ['query', name], msg: `Input should be a valid integer, unable to parse string as an integer (got ${JSON.stringify(v)})`, type: 'int_parsing' }]);
  return Number(v);
}

/** A boolean query parameter as FastAPI reads one (true/false, 1/0, yes/no, on/off). */
export function boolParam(q: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = q.get(name);
  if (v === null) return fallback;
  const t = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(t)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n'].includes(t)) return false;
  throw invalid([{ loc: ['query', name], msg: `Input should be a valid boolean (got ${JSON.stringify(v)})`, type: 'bool_parsing' }]);
}

/** `state_in`: required and repeatable; each a 1.0 state. */
export function statesParam(q: URLSearchParams): State[] {
  const values = q.getAll('state_in');
  if (values.length === 0) throw invalid([{ loc: ['query', 'state_in'], msg: 'Field required', type: 'missing' }]);
  return values.map((v, i) => {
    if ((STATES as string[]).includes(v)) return v as State;
    throw invalid([{ loc: ['query', 'state_in', i], msg: `Input should be ${STATES.map((s) => `'${s}'`).join(', ')} (got ${JSON.stringify(v)})`, type: 'enum' }]);
  });
}
