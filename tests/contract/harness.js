// Loads the bundled extension the way VS Code's extension host does (require the bundle,
// call activate(context), keep context.subscriptions), with `vscode` resolved to the stand-in
// module; records every HTTP call the extension makes through the global fetch; waits for
// conditions (polling with a deadline, never a fixed sleep).
'use strict';

const Module = require('module');
const path = require('path');

const STUB = path.join(__dirname, 'vscode-stub', 'index.js');
const originalResolve = Module._resolveFilename;
Module._resolveFilename = function resolve(request, ...rest) {
  if (request === 'vscode') return STUB;
  return originalResolve.call(this, request, ...rest);
};
const vscode = require(STUB);
const stub = vscode.__stub;

function parse(text) {
  if (typeof text !== 'string' || text === '') return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

class Network {
  constructor() {
    this.calls = [];
    this.inflight = 0;
    const real = globalThis.fetch;
    globalThis.fetch = async (url, init = {}) => {
      const u = new URL(String(url));
      const call = {
        method: (init.method || 'GET').toUpperCase(),
        url: String(url),
        path: u.pathname,
        status: null,
        request: parse(init.body),
        response: null,
        error: null,
        ms: null,
      };
      const started = Date.now();
      this.calls.push(call);
      this.inflight += 1;
      try {
        const res = await real(url, init);
        call.response = parse(await res.clone().text());
        call.status = res.status;
        return res;
      } catch (e) {
        call.error = String(e);
        throw e;
      } finally {
        call.ms = Date.now() - started;
        call.finished = true;
        this.inflight -= 1;
      }
    };
  }

  // Calls to `route` (with or without the doubled slash of a trailing-slash server URL).
  to(route, method) {
    return this.calls.filter((c) => c.path.replace(/^\/+/, '/') === route && (!method || c.method === method));
  }

  // Calls whose answer (body included) is in.
  done(route, method) { return this.to(route, method).filter((c) => c.finished); }
}

async function waitFor(what, predicate, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

class Host {
  constructor({ bundle, network, options }) {
    this.bundle = bundle;
    this.network = network;
    this.activations = 0;
    this.reloadRequested = false;
    this.unhandled = [];
    this.logs = [];
    stub.configure({ ...options, onReload: () => { this.reloadRequested = true; } });
    process.on('unhandledRejection', (reason) => { this.unhandled.push(String(reason && reason.stack ? reason.stack : reason)); });
    // The extension logs through console; keep it off stdout and in the report.
    for (const level of ['log', 'info', 'warn', 'error']) {
      console[level] = (...args) => {
        const line = args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
        this.logs.push(`${level}: ${line}`);
        process.stderr.write(`[extension ${level}] ${line}\n`);
      };
    }
  }

  activate() {
    delete require.cache[require.resolve(this.bundle)];
    this.extension = require(this.bundle);
    this.context = stub.makeContext();
    this.activations += 1;
    this.reloadRequested = false;
    return this.extension.activate(this.context);
  }

  // workbench.action.reloadWindow: the extension host goes away and comes back.
  async reload() {
    if (this.extension && this.extension.deactivate) await this.extension.deactivate();
    for (const d of this.context.subscriptions) {
      try { d.dispose(); } catch { /* as VS Code: a failing dispose does not stop the others */ }
    }
    stub.reset();
    return this.activate();
  }

  // Nothing in flight: no HTTP call, no pending editor round trip, twice in a row.
  async settle(timeoutMs = 30000) {
    let quiet = 0;
    await waitFor('the extension to settle', () => {
      quiet = this.network.inflight === 0 && stub.bench.pending.size === 0 ? quiet + 1 : 0;
      return quiet >= 3;
    }, timeoutMs);
  }
}

module.exports = { Host, Network, waitFor, vscode, stub };
