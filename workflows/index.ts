// Entry point of autonode's workflow bundle: every workflow the workers register is
// exported from here.
export { nodeClaimWorkflow } from './nodeclaim';
export { watchWorkflow } from './watch';
export { provisionerWorkflow } from './provisioner';
export { enablementWorkflow } from './enablement';
export { disruptionWorkflow } from './disruption';
export { managementWatchWorkflow } from './management-watch';
export { interruptionWorkflow } from './interruption';
