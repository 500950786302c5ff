// Every workflow the worker registers. Workflow code is deterministic and imports activity types only.
export { healthCheck } from './health-check';
export { trainingRun } from './training-run';
export { aglGradeEpisode } from './grade-episode';
export { sweep } from './sweep';
