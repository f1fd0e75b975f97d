export { installCrds } from '../../dev/autonode/crds';
