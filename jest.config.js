// Three projects: `unit` needs nothing but Node; `workflow` needs Temporal's test server
// from the cache (npm run setup); `integration` runs against the real local
// stack (etcd, two kube-apiservers, controller-manager, scheduler, kwok, moto, Temporal),
// started once per run by test/support/global-setup.ts and stopped by its teardown.
//
// @kubernetes/client-node 1.x is an ES module, as are a few of its dependencies: ts-jest
// (allowJs) transforms them to CommonJS; everything else in node_modules is left alone.
const esmPackages = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose', 'jsonpath-plus'];

const common = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.[tj]sx?$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

module.exports = {
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // the real workflows on Temporal's time-skipping test server, activities scripted
    { ...common, displayName: 'workflow', testMatch: ['<rootDir>/test/workflow/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-timeout.ts'],
    },
  ],
};
