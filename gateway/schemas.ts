// Bodies and query parameters of the 1.0 routes, as upstream's pydantic models and FastAPI parameters take them.
// A mistake answers 422 with FastAPI's shape: {"detail": [{"loc": [...], "msg": ..., "type": ...}]}.
import { z } from 'zod';
import { idProblem, MAX_QUERY_INT, quote } from '../common/front-door';
import { ValidationError } from '../store/errors';
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
  rollout_id: z.string().superRefine((v, ctx) => {
    const problem = idProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }).nullable().default(null),
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

/** An integer query parameter (FastAPI's int), or its default; within what SQLite binds as an integer. */
export function intParam(q: URLSearchParams, name: string, fallback: number): number {
  const v = q.get(name);
  if (v === null) return fallback;
  if (!/^[+-]?\d+$/.test(v.trim())) throw invalid([{ loc: ['query', name], msg: `Input should be a valid integer, unable to parse string as an integer (got ${quote(v)})`, type: 'int_parsing' }]);
  const n = Number(v);
  if (Math.abs(n) > MAX_QUERY_INT) throw invalid([{ loc: ['query', name], msg: `Input should be an integer from -${MAX_QUERY_INT} to ${MAX_QUERY_INT} (got ${quote(v)})`, type: 'int_range' }]);
  return n;
}

/** A query parameter a gateway route declares: how it is read, and its value when absent. */
export type QueryParam =
  | { kind: 'int'; fallback: number }
  | { kind: 'bool'; fallback: boolean }
  | { kind: 'string' }
  | { kind: 'states' };

/** The declared query parameters of a route, read and checked (a mistake: FastAPI's 422 naming it). */
export function queryParams(q: URLSearchParams, spec: Record<string, QueryParam>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(spec)) {
    if (p.kind === 'int') out[name] = intParam(q, name, p.fallback);
    else if (p.kind === 'bool') out[name] = boolParam(q, name, p.fallback);
    else if (p.kind === 'states') out[name] = statesParam(q);
    else out[name] = q.get(name);
  }
  return out;
}

/** A path parameter that cannot be an id: FastAPI's 422 naming it. */
export function invalidPath(name: string, problem: string): ValidationError {
  return invalid([{ loc: ['path', name], msg: problem, type: 'value_error' }]);
}

/** A boolean query parameter as FastAPI reads one (true/false, 1/0, yes/no, on/off). */
export function boolParam(q: URLSearchParams, name: string, fallback: boolean): boolean {
  const v = q.get(name);
  if (v === null) return fallback;
  const t = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(t)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n'].includes(t)) return false;
  throw invalid([{ loc: ['query', name], msg: `Input should be a valid boolean (got ${quote(v)})`, type: 'bool_parsing' }]);
}

/** `state_in`: required and repeatable; each a 1.0 state. */
export function statesParam(q: URLSearchParams): State[] {
  const values = q.getAll('state_in');
  if (values.length === 0) throw invalid([{ loc: ['query', 'state_in'], msg: 'Field required', type: 'missing' }]);
  return values.map((v, i) => {
    if ((STATES as string[]).includes(v)) return v as State;
    throw invalid([{ loc: ['query', 'state_in', i], msg: `Input should be ${STATES.map((s) => `'${s}'`).join(', ')} (got ${quote(v)})`, type: 'enum' }]);
  });
}
