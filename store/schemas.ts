// zod schemas for request bodies of the store's JSON API. Shapes follow the Python models (§2, §4.4):
// unknown keys are ignored except where the Python model keeps them (Span, SpanContext, status, events, links).
import { z } from 'zod';
import { ATTEMPT_STATUSES, ROLLOUT_STATUSES } from './types';

const finite = z.number().refine(Number.isFinite, 'must be a finite number');
const attemptStatus = z.enum(ATTEMPT_STATUSES as [string, ...string[]]);
const rolloutStatus = z.enum(ROLLOUT_STATUSES as [string, ...string[]]);
const mode = z.enum(['train', 'val', 'test']);
const jsonObject = z.record(z.string(), z.unknown());
/** A key that must be present but may hold any JSON value, null included (pydantic "required Optional"). */
const requiredAny = z.unknown().refine((v) => v !== undefined, 'Field required');

export const RolloutConfigSchema = z.object({
  timeout_seconds: finite.nullable().optional(),
  unresponsive_seconds: finite.nullable().optional(),
  max_attempts: z.number().int().min(1, 'max_attempts must be >= 1').optional(),
  retry_condition: z.array(attemptStatus).optional(),
});

export const EnqueueRolloutSchema = z.object({
  input: requiredAny,
  mode: mode.nullable().optional(),
  resources_id: z.string().nullable().optional(),
  config: RolloutConfigSchema.nullable().optional(),
  metadata: jsonObject.nullable().optional(),
});

export const EnqueueManySchema = z.object({ rollouts: z.array(EnqueueRolloutSchema) });

export const StartRolloutSchema = EnqueueRolloutSchema.extend({ worker_id: z.string().nullable().optional() });

export const DequeueSchema = z
  .object({
    limit: z.number().int().optional(),
    worker_id: z.string().nullable().optional(),
    // Ours (routing): only rollouts routed to this agent, and whose idempotency key starts with key_prefix.
    agent: z.string().min(1).nullable().optional(),
    key_prefix: z.string().min(1).nullable().optional(),
  })
  .nullable()
  .optional();

export const StartAttemptSchema = z.object({ worker_id: z.string().nullable().optional() }).nullable().optional();

export const UpdateRolloutSchema = z.object({
  input: z.unknown().optional(),
  mode: mode.nullable().optional(),
  resources_id: z.string().nullable().optional(),
  status: rolloutStatus.nullable().optional(),
  config: RolloutConfigSchema.nullable().optional(),
  metadata: jsonObject.nullable().optional(),
});

export const UpdateAttemptSchema = z.object({
  status: attemptStatus.nullable().optional(),
  worker_id: z.string().nullable().optional(),
  last_heartbeat_time: finite.nullable().optional(),
  metadata: jsonObject.nullable().optional(),
});

export const UpdateWorkerSchema = z.object({ heartbeat_stats: jsonObject.nullable().optional() }).nullable().optional();

const paginationFields = {
  limit: z.number().int().optional(),
  offset: z.number().int().optional(),
  sort_by: z.string().nullable().optional(),
  sort_order: z.string().optional(),
  filter_logic: z.string().optional(),
};

const stringList = z.array(z.string());

export const QueryRolloutsSchema = z.object({
  ...paginationFields,
  status_in: z.array(rolloutStatus).nullable().optional(),
  status: z.array(rolloutStatus).nullable().optional(), // deprecated alias
  rollout_id_in: stringList.nullable().optional(),
  rollout_ids: stringList.nullable().optional(), // deprecated alias
  rollout_id_contains: z.string().nullable().optional(),
  /** Ours: rollouts whose idempotency key starts with this (e.g. one batch of a training run). */
  idempotency_key_prefix: z.string().min(1).nullable().optional(),
});

export const QueryAttemptsSchema = z.object(paginationFields).nullable().optional();

export const QueryWorkersSchema = z.object({
  ...paginationFields,
  status_in: z.array(z.enum(['idle', 'busy', 'unknown'])).nullable().optional(),
  worker_id_contains: z.string().nullable().optional(),
});

const optStr = z.string().nullable().optional();
export const QuerySpansSchema = z.object({
  ...paginationFields,
  rollout_id: z.string(),
  attempt_id: optStr,
  trace_id: optStr,
  trace_id_contains: optStr,
  span_id: optStr,
  span_id_contains: optStr,
  parent_id: optStr,
  parent_id_contains: optStr,
  name: optStr,
  name_contains: optStr,
});

export const NextSequenceSchema = z.object({ rollout_id: z.string(), attempt_id: z.string() });

/** Ours: what the proxy needs to plan a rollout-scoped call (span-ops.ts callRecord). */
export const CallRecordSchema = z.object({ rollout_id: z.string(), attempt_id: z.string(), call_key: z.string().min(1), with_last: z.boolean().optional() });

export const WaitRolloutsSchema = z.object({
  rollout_ids: stringList,
  timeout: finite.nullable().optional(),
});

const llmResource = z.looseObject({
  resource_type: z.enum(['llm', 'proxy_llm']),
  endpoint: z.string(),
  model: z.string(),
  api_key: z.string().nullable().default(null),
  sampling_parameters: jsonObject.default({}),
});
const promptTemplateResource = z.looseObject({
  resource_type: z.literal('prompt_template'),
  template: z.string(),
  engine: z.enum(['jinja', 'f-string', 'poml']),
});
export const NamedResourcesSchema = z.record(
  z.string(),
  z.discriminatedUnion('resource_type', [llmResource, promptTemplateResource]),
);

/** Span attributes: primitives or homogeneous lists of one primitive type (Python rejects null, objects, mixes). */
const attributeValue = z.union([
  z.string(), finite, z.boolean(), z.array(z.string()), z.array(finite), z.array(z.boolean()),
]);

const spanContext = z.looseObject({
  trace_id: z.string(),
  span_id: z.string(),
  is_remote: z.boolean().optional(),
  trace_state: z.record(z.string(), z.string()).optional(),
});

export const SpanSchema = z.looseObject({
  rollout_id: z.string().min(1),
  attempt_id: z.string().min(1),
  sequence_id: z.number().int(),
  trace_id: z.string(),
  span_id: z.string().min(1),
  parent_id: z.string().nullable(),
  name: z.string(),
  status: z.looseObject({ status_code: z.enum(['UNSET', 'OK', 'ERROR']), description: z.string().nullable().optional() }).optional(),
  attributes: z.record(z.string(), attributeValue).optional(),
  events: z.array(z.looseObject({ name: z.string() })).optional(),
  links: z.array(z.looseObject({})).optional(),
  start_time: finite.nullable(),
  end_time: finite.nullable(),
  context: spanContext.nullable(),
  parent: spanContext.nullable(),
  resource: z.object({ attributes: jsonObject, schema_url: z.string().optional() }).optional(),
});

export const QueryResourcesSchema = z.object({
  limit: paginationFields.limit,
  offset: paginationFields.offset,
  sort_by: paginationFields.sort_by,
  sort_order: paginationFields.sort_order,
  resources_id: optStr,
  resources_id_contains: optStr,
});

const runRecordKind = z.enum(['step', 'metrics', 'checkpoint', 'trace', 'configured', 'file']);
const step = z.number().int().min(0);
/** Run records (store/run-records.ts): written in one transaction, each kept once per (kind, step, key). */
export const PutRunRecordsSchema = z.object({
  records: z.array(z.object({ kind: runRecordKind, step, key: z.string().max(2000).optional(), body: z.string() })).max(10_000),
});
export const QueryRunRecordsSchema = z.object({
  kind: runRecordKind.optional(),
  kinds: z.array(runRecordKind).min(1).max(10).optional(),
  after_seq: z.number().int().optional(),
  step: step.optional(),
  key: z.string().optional(),
  limit: z.number().int().min(1).optional(),
});

/** `POST /runs/{run}/prune`: retention's cut (store/run-policy/retention.ts). */
export const PruneRunSchema = z.object({ before_batch: z.number().int().min(0, 'must be a whole number >= 0') });
