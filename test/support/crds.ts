export { installCrds } from '../../starter/dev/crds';
