import { parseWorkerConfig, workerDeploymentVersion } from '../../../workers/config';

describe('worker versioning configuration (AUTONODE_BUILD_ID, AUTONODE_DEPLOYMENT_NAME)', () => {
  it('is off without a build id: unversioned workers, as before', () => {
    expect(workerDeploymentVersion(parseWorkerConfig({}))).toBeUndefined();
    expect(workerDeploymentVersion(parseWorkerConfig({ AUTONODE_DEPLOYMENT_NAME: 'autonode-eu' }))).toBeUndefined();
  });

  it('a build id makes this process a version of the deployment (autonode unless named)', () => {
    expect(workerDeploymentVersion(parseWorkerConfig({ AUTONODE_BUILD_ID: '0.4.1+g1a2b3c4' }))).toEqual({ deploymentName: 'autonode', buildId: '0.4.1+g1a2b3c4' });
    expect(workerDeploymentVersion(parseWorkerConfig({ AUTONODE_BUILD_ID: '9f1c2e7', AUTONODE_DEPLOYMENT_NAME: 'autonode-eu' }))).toEqual({ deploymentName: 'autonode-eu', buildId: '9f1c2e7' });
  });

  it.each([
    ['a build id with a space', { AUTONODE_BUILD_ID: 'v1 beta' }, /AUTONODE_BUILD_ID: letters, digits/],
    ['an empty build id', { AUTONODE_BUILD_ID: '' }, /AUTONODE_BUILD_ID/],
    ['a build id of 256 characters', { AUTONODE_BUILD_ID: 'x'.repeat(256) }, /AUTONODE_BUILD_ID/],
    ['a deployment name with "."', { AUTONODE_BUILD_ID: 'a', AUTONODE_DEPLOYMENT_NAME: 'autonode.eu' }, /AUTONODE_DEPLOYMENT_NAME: .*reserves "\." and ":"/],
    ['a deployment name with ":"', { AUTONODE_BUILD_ID: 'a', AUTONODE_DEPLOYMENT_NAME: 'ns:autonode' }, /AUTONODE_DEPLOYMENT_NAME/],
  ])('%s is refused, naming the variable', (_what, env, message) => {
    expect(() => parseWorkerConfig(env)).toThrow(message);
  });
});
