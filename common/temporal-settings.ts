// Where the Temporal server is and which task queue the training worker polls; flags win over the environment.
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** The Temporal UI, for links printed to the user. */
  uiUrl: string;
}

export const DEFAULT_TASK_QUEUE = 'agl-training';

export function temporalSettings(flags: Partial<TemporalSettings> = {}, env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const address = flags.address ?? env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  return {
    address,
    namespace: flags.namespace ?? env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue: flags.taskQueue ?? env.AGL_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    uiUrl: (flags.uiUrl ?? env.TEMPORAL_UI_URL ?? uiUrlBeside(address)).replace(/\/+$/, ''),
  };
}

/** The UI where the Temporal CLI's dev server puts it: the frontend's host, its port + 1000 (7233 → 8233). */
export function uiUrlBeside(address: string): string {
  const m = /^(.*):(\d+)$/.exec(address.replace(/^\w+:\/\//, ''));
  return m ? `http://${m[1]}:${Number(m[2]) + 1000}` : 'http://127.0.0.1:8233';
}

export function workflowUiLink(s: TemporalSettings, workflowId: string): string {
  return `${s.uiUrl}/namespaces/${encodeURIComponent(s.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
