// Bundles the vendored extension with its own build script, unchanged: `node esbuild.js
// --production` in extension/ (what its `vscode:prepublish` -> `package` script runs, minus
// the type check, the lint and the webpack build of the webview script, which produce no part
// of dist/extension.js). Its esbuild.js copies sql-wasm.wasm from <its dir>/node_modules, so
// extension/node_modules is made a link to this folder's node_modules first.
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const extension = path.join(__dirname, 'extension');
const link = path.join(extension, 'node_modules');
if (!fs.existsSync(link)) fs.symlinkSync(path.join('..', 'node_modules'), link, 'dir');
execFileSync(process.execPath, ['esbuild.js', '--production'], { cwd: extension, stdio: ['ignore', 'inherit', 'inherit'] });
const bundle = path.join(extension, 'dist', 'extension.js');
if (!fs.existsSync(bundle)) throw new Error(`no bundle at ${bundle}`);
process.stdout.write(`${bundle}\n`);
