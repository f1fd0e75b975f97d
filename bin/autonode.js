#!/usr/bin/env node
// Entry point of the `autonode` CLI. Runs the compiled CLI when `npm run build` has made
// one, otherwise the TypeScript sources through tsx, so `npx autonode` works in a checkout
// straight after `npm ci`.
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const compiled = path.join(__dirname, '..', 'dist', 'starter', 'cli.js');
if (fs.existsSync(compiled) && !process.env.AUTONODE_FROM_SOURCE) {
  require(compiled).main(process.argv);
} else {
  require('tsx/cjs');
  require(path.join(__dirname, '..', 'starter', 'cli.ts')).main(process.argv);
}
