// A deliberately incompatible change to every workflow at once, for the replay tests: one
// more command (a 1 ms timer) before the workflow's first step. No recorded run has it.
import { sleep, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        await sleep(1);
        return next(input);
      },
    },
  ],
});
