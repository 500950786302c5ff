// What SkyRL's own database says a run's weights went through: the engine records every request it ran (the
// `futures` table: type, model, input, status), so the chain of saves behind a checkpoint, and the optimizer steps
// between each save and its parent, can be read from the engine rather than from the run's records. A step applied
// twice shows as two optim steps in one link; a step lost shows as a missing name in the chain.
import Database from 'better-sqlite3';

interface FutureRow {
  request_id: number;
  request_type: string;
  model_id: string | null;
  request_data: string;
  status: string;
}

export interface LineageLink {
  /** The step-named save (000003) at the end of this link. */
  name: string;
  modelId: string;
  /** Completed OPTIM_STEP requests of that model between the parent and this save. */
  optimSteps: number;
  /** Completed FORWARD_BACKWARD requests in the same span. */
  forwardBackwards: number;
}

const STEP_NAME = /^\d{6}$/;

/**
 * The chain of step-named saves that ends in `tinker://<model>/weights/<name>`, newest first, back to the save
 * made right after the model was created (the run's initial state).
 */
export function lineageOf(dbFile: string, statePath: string): LineageLink[] {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT request_id, request_type, model_id, request_data, status FROM futures ORDER BY request_id').all() as FutureRow[];
    const byModel = new Map<string, FutureRow[]>();
    for (const r of rows) if (r.model_id) byModel.set(r.model_id, [...(byModel.get(r.model_id) ?? []), r]);
    const links: LineageLink[] = [];
    let at = parse(statePath);
    for (let guard = 0; guard < 100_000; guard++) {
      const own = byModel.get(at.modelId) ?? [];
      const saveIdx = own.findIndex((r) => r.request_type === 'SAVE_WEIGHTS' && r.status === 'COMPLETED' && data(r).path === at.name);
      if (saveIdx < 0) throw new Error(`the engine has no completed save ${at.name} of ${at.modelId}`);
      // The parent: the model's previous step-named save, else what the model was loaded from, else its creation.
      let from = saveIdx - 1;
      while (from >= 0 && !(own[from].request_type === 'SAVE_WEIGHTS' && own[from].status === 'COMPLETED' && STEP_NAME.test(String(data(own[from]).path)))) {
        if (own[from].request_type === 'LOAD_WEIGHTS' || own[from].request_type === 'CREATE_MODEL') break;
        from--;
      }
      const span = own.slice(from + 1, saveIdx).filter((r) => r.status === 'COMPLETED');
      links.push({
        name: at.name,
        modelId: at.modelId,
        optimSteps: span.filter((r) => r.request_type === 'OPTIM_STEP').length,
        forwardBackwards: span.filter((r) => r.request_type === 'FORWARD_BACKWARD').length,
      });
      const parent = own[from];
      if (!parent || parent.request_type === 'CREATE_MODEL') return links;
      if (parent.request_type === 'SAVE_WEIGHTS') at = { modelId: at.modelId, name: String(data(parent).path) };
      else at = { modelId: String(data(parent).source_model_id), name: String(data(parent).checkpoint_id) };
    }
    throw new Error('the lineage does not end');
  } finally {
    db.close();
  }
}

function parse(statePath: string): { modelId: string; name: string } {
  const m = /^tinker:\/\/([^/]+)\/weights\/([^/]+)$/.exec(statePath);
  if (!m) throw new Error(`not a state path: ${statePath}`);
  return { modelId: m[1], name: m[2] };
}

function data(r: FutureRow): Record<string, unknown> {
  return JSON.parse(r.request_data) as Record<string, unknown>;
}
