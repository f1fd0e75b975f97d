// Folder contracts from docs/ARCHITECTURE.md, enforced here rather than in review:
//  - core/ is pure: no Node built-ins, no Temporal, no Kubernetes or AWS clients, no
//    imports from the outer folders.
//  - workflows/ run in Temporal's deterministic sandbox: no Node built-ins, no I/O
//    libraries, and only *types* from activities/.
//  - dev/ (local stack, simulated kubelets, `autonode dev`) is not shipped: the build
//    (tsconfig.build.json) compiles whatever the shipped folders import, so they import
//    nothing from dev/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import globals from 'globals';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const ioLibraries = [
  '@kubernetes/client-node', '@aws-sdk/*', '@temporalio/*', 'pino', 'prom-client', 'commander',
  '@peculiar/x509', 'reflect-metadata',
];
const outerFolders = (...folders) =>
  folders.flatMap((f) => [`**/${f}`, `**/${f}/**`, `../${f}/*`, `../../${f}/*`]);

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['core/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.map((name) => ({ name, message: 'core/ is pure: no Node built-ins (ARCHITECTURE.md, import rules).' })),
        patterns: [
          { group: ioLibraries, message: 'core/ is pure: no I/O or Temporal libraries.' },
          { group: outerFolders('workflows', 'activities', 'workers', 'starter', 'dev', 'test'), message: 'core/ imports only core/.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'core/ reads no environment: configuration is passed in.' },
        { name: 'fetch', message: 'core/ does no I/O.' },
        { name: 'setTimeout', message: 'core/ has no clock: pass `now` in.' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Date', property: 'now', message: 'core/ has no clock: pass `now` in.' },
        { object: 'Math', property: 'random', message: 'core/ is deterministic: derive ids from inputs.' },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code runs in the Temporal sandbox: no Node built-ins.' })),
        patterns: [
          {
            group: ['@kubernetes/client-node', '@aws-sdk/*', '@temporalio/worker', '@temporalio/client', '@temporalio/activity', 'pino', 'prom-client', 'commander'],
            message: 'Workflow code is deterministic: do I/O in activities.',
          },
          { group: outerFolders('workers', 'starter', 'dev', 'test'), message: 'workflows/ import only core/ and activity types.' },
          {
            group: outerFolders('activities'),
            allowTypeImports: true,
            message: 'workflows/ import only *types* from activities/ (proxyActivities<typeof …>).',
          },
        ],
      }],
      'no-restricted-properties': ['error',
        { object: 'Math', property: 'random', message: 'Use workflow-safe ids derived from inputs.' },
      ],
    },
  },
  {
    files: ['activities/**/*.ts', 'workers/**/*.ts', 'starter/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: outerFolders('dev'), message: 'dev/ is not shipped (tsconfig.build.json): the CLI, workers and activities must not import it.' },
        ],
      }],
    },
  },
  {
    // plain CommonJS helpers (CLI shim, jest reporter, small scripts)
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
