// What no recorded history can run, and why (test/workflows/replay.test.ts). A function listed here is still checked:
// when its code changes (its fingerprint, printed by the replay test) the test fails until someone records a
// history that runs it or judges it again here. Keep this short: a path a run can take belongs in a recorded
// history, not here.

/** Bundled files none of whose code a replay can reach, whatever they hold. */
export const UNREPLAYED_FILES: { file: string; why: string }[] = [
  {
    file: 'config/errors.ts',
    why: 'ConfigError and its message helpers run only when parseRunChanges refuses a configure request, which the update validator does before any handler: a refused update leaves nothing in history, and replay runs no validator',
  },
];

/** Functions of the workflow bundle that no replay runs. */
export const UNREPLAYED_FUNCTIONS: { fn: string; fingerprint: string; why: string }[] = [
  {
    fn: 'workflows/run-control.ts:RunControl/installHandlers/setHandler(progressQuery)',
    fingerprint: 'cd1f7d271757',
    why: 'a query handler: queries are not in history, and replay runs none (it cannot change what the workflow does); its reply keeps the wire names batch, numBatches and batchStartedAtMs',
  },
  {
    fn: 'workflows/run-control.ts:RunControl/installHandlers/validator',
    fingerprint: '979daadc8f54',
    why: "the checkpoint update's validator: replay runs no validator (a refused update leaves nothing in history)",
  },
  {
    fn: 'workflows/run-control.ts:RunControl/installHandlers/validator~2',
    fingerprint: '78fedcd58121',
    why: "the configure update's validator: replay runs no validator (a refused update leaves nothing in history)",
  },
  {
    fn: 'shared/sweep-plan.ts:sweepWorkflowId',
    fingerprint: '8d32423248ae',
    why: 'names a sweep for the client (client.ts sweep commands); bundled with sweep-plan.ts, never called by workflow code',
  },
  {
    fn: 'workflows/sweep.ts:Sweep/resume/condition#0',
    fingerprint: 'ee822b496b37',
    why: 'the wait between tries of a failed resume signal to a child Temporal has not reported closed: no server we can run loses such a signal (a closed child is the only failure seen, and is handled before the wait); the retry is tested in test/workflows/sweep.test.ts with an interceptor that fails the signal',
  },
];

/** Sides of a patched() that no recorded history takes. */
export const UNREPLAYED_PATCH_SIDES: { patch: string; side: 'patched' | 'unpatched'; why: string }[] = [
  {
    patch: 'sweep-resume-retried',
    side: 'unpatched',
    why: 'called only once a resume signal failed; no sweep recorded before the patch had one fail (their failure was dropped, so such a run replays as it ran)',
  },
];
