// Every activity the worker registers. Activities get their service URLs from the worker's environment, never
// from workflow history, so secrets stay out of history.
import { healthActivities } from './health';

export function createActivities() {
  return { ...healthActivities };
}

export type Activities = ReturnType<typeof createActivities>;
