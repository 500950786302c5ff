// A workflow interceptor module for test/workflows/sweep.test.ts only: the sweep's resume signals to some children
// fail as Temporal reports a failed signal, so the sweep's retry is exercised without a server that loses one.
// Children named ...-c0-s0 fail twice and then get theirs; ...-c1-s0 never do.
import { ApplicationFailure, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

const failures = new Map<string, number>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      async signalWorkflow(input, next) {
        const id = (input.target.type === 'external' ? input.target.workflowExecution.workflowId : null) ?? '';
        const n = (failures.get(id) ?? 0) + 1;
        if (input.signalName === 'resume' && ((id.endsWith('-c0-s0') && n <= 2) || id.endsWith('-c1-s0'))) {
          failures.set(id, n);
          throw ApplicationFailure.create({ message: `Unable to signal external workflow because it was not found (test ${n})`, nonRetryable: true });
        }
        return next(input);
      },
    },
  ],
});
