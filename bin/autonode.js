#!/usr/bin/env node
// Entry point of the `autonode` CLI. Runs the compiled CLI when `npm run build` has made
// one, otherwise the TypeScript sources through tsx, so `npx autonode` works in a checkout
// straight after `npm ci`. `autonode dev` (local stack, simulated kubelets) is not part of
// the build: in a checkout it always runs from source, through dev/cli.ts — the shipped
// commands plus `dev`.
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const compiled = path.join(root, 'dist', 'starter', 'cli.js');
const checkoutCli = path.join(root, 'dev', 'cli.ts');
const inCheckout = fs.existsSync(checkoutCli);
const fromSource = !fs.existsSync(compiled) || process.env.AUTONODE_FROM_SOURCE || (inCheckout && process.argv[2] === 'dev');
if (fromSource) {
  require('tsx/cjs');
  require(inCheckout ? checkoutCli : path.join(root, 'starter', 'cli.ts')).main(process.argv);
} else {
  require(compiled).main(process.argv);
}
