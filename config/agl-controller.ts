// Ours: a run whose rollouts Agent-lightning 1.0 agents serve, launched by the unchanged `agl-controller` through
// the store's 1.0 gateway API (gateway/). What the controller needs to launch one, as a 1.0 rollout's
// `config.local` (agent_class, env_map) and `config.k8s` (job_template) carry it.
import { z } from 'zod';

export const AglControllerSchema = z
  .strictObject({
    /** `module:Class` (or `module.Class`) the local controller runs: built without arguments, `.run()` awaited. */
    agentClass: z
      .string()
      .regex(/^[A-Za-z_][\w.]*[:.][A-Za-z_]\w*$/, 'a Python class path, module:Class or module.Class')
      .nullable()
      .default(null),
    /**
     * Environment of each agent: name → `input` (the task, JSON unless a string), `input.a.0` (a part of it) or a
     * literal string.
     */
    envMap: z
      .record(z.string(), z.string())
      .superRefine((m, ctx) => {
        for (const name of Object.keys(m)) {
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
            ctx.addIssue({ code: 'custom', path: [name], message: 'not an environment variable name (letters, digits and _, not starting with a digit)' });
          }
        }
      })
      .default({}),
    /** The Jinja Job template the k8s controller renders per rollout. */
    jobTemplate: z.string().min(1).nullable().default(null),
  })
  .refine((c) => c.agentClass !== null || c.jobTemplate !== null, { message: 'give agentClass (local controller) or jobTemplate (k8s controller)' });

export type AglControllerConfig = z.output<typeof AglControllerSchema>;
