export { installCrds, installManagementCrds } from '../../dev/autonode/crds';
