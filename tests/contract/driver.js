// Drives the real Copilot Arena extension (the esbuild bundle of extension/) against a server,
// through its own entry points only: activate(), the inline completion provider as the editor
// calls it, its commands (Tab / Shift-Tab, inline-edit accept left / right / reject), its
// Personal Statistics webview (vote count, scores, Register). Writes a JSON report of every
// HTTP call it saw (route, method, status, bodies) and of what the user saw.
//
//   node driver.js --config run.json [--report report.json]
//   node driver.js --server http://127.0.0.1:8000 [--trailing-slash] [--privacy Private] [--votes 20]
//
// run.json: {bundle, serverUrl, trailingSlash, privacy, machineId, workdir, marker, repoUrl,
//            votes, modelTags, username, metadata, edits: ["left", "right", "reject"], single}
// Without --report the report goes to stdout (the extension's own console output goes to stderr).
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { Host, Network, waitFor, vscode, stub } = require('./harness');
const { Panel } = require('./panel');

function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].replace(/^--/, '');
    if (name === 'trailing-slash') out[name] = true;
    else out[name] = argv[++i];
  }
  return out;
}

// A run from command-line flags, for trying the extension against any server by hand.
function configFromFlags(a) {
  const marker = `MANUAL${Date.now()}`;
  return {
    bundle: path.join(__dirname, 'extension', 'dist', 'extension.js'),
    serverUrl: a.server.replace(/\/+$/, ''),
    trailingSlash: Boolean(a['trailing-slash']),
    privacy: a.privacy || 'Research',
    machineId: `manual-machine-${marker.toLowerCase()}`,
    workdir: fs.mkdtempSync(path.join(require('os').tmpdir(), 'arena-driver-')),
    marker,
    repoUrl: `https://example.org/manual/REPO_${marker}.git`,
    votes: Number(a.votes || 20),
    single: true,
    edits: ['left', 'right', 'reject'],
    modelTags: a['model-tags'] ? a['model-tags'].split(',') : undefined,
    username: a.username || `manual_${Date.now() % 100000}`,
    metadata: { jobTitle: 'tester' },
  };
}

function contributedDefaults(extensionDir) {
  const pkg = JSON.parse(fs.readFileSync(path.join(extensionDir, 'package.json'), 'utf8'));
  const defaults = {};
  for (const [key, spec] of Object.entries(pkg.contributes.configuration.properties)) defaults[key] = spec.default;
  return { defaults, version: pkg.version };
}

function workspace(cfg) {
  const dir = path.join(cfg.workdir, 'workspace');
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('git', ['init', '-q', dir]);
  execFileSync('git', ['-C', dir, 'remote', 'add', 'origin', cfg.repoUrl]);
  const file = path.join(dir, 'app.py');
  const functions = [0, 1, 2].map((n) => [
    `def total_${n}(xs):`,
    `    t = 0  # CODE_TO_EDIT_${cfg.marker} ${n}`,
    '    for x in xs:',
    '        t += x',
    '    return t',
    '',
    '',
  ].join('\n'));
  const head = [`"""Contract workspace CONTRACT_PREFIX_${cfg.marker}."""`, 'import math', '', '', ...functions].join('\n');
  fs.writeFileSync(file, `${head}\n\nprint("CONTRACT_SUFFIX_${cfg.marker}")\n`);
  return { file, cursor: head.split('\n').length - 1 };
}

// Typing: the text goes in at the cursor (the cursor ends after it), as keystrokes would.
function type(editor, text) {
  stub.bench.applyEdits(editor.document, [{ range: new vscode.Range(editor.selection.active, editor.selection.active), text }]);
}

function keybindingAllowed() {
  // "when": "editorTextFocus && inlineSuggestionVisible && arena.tabAutocompleteEnabled"
  return Boolean(stub.record.contexts['arena.tabAutocompleteEnabled'] && stub.bench.inlineVisible);
}

class Run {
  constructor(cfg) {
    this.cfg = cfg;
    this.network = new Network();
    const { defaults, version } = contributedDefaults(path.dirname(path.dirname(cfg.bundle)));
    this.report = { config: { ...cfg }, extensionVersion: version, votes: [], edits: [], single: null, panel: {}, errors: [] };
    const settings = {
      'arena.serverUrl': cfg.serverUrl + (cfg.trailingSlash ? '/' : ''),
      'arena.codePrivacySettings': cfg.privacy,
    };
    if (cfg.modelTags) settings['arena.modelTags'] = cfg.modelTags;
    this.host = new Host({
      bundle: cfg.bundle,
      network: this.network,
      options: {
        machineId: cfg.machineId,
        settings,
        defaults,
        extensionPath: path.dirname(path.dirname(cfg.bundle)),
        userDataDir: path.join(cfg.workdir, 'user-data'),
        answers: {
          message: (level, text, items) => (items.includes('Agree') ? 'Agree' : undefined),
          inputBox: () => this.instruction,
        },
      },
    });
  }

  async step(name, fn) {
    try {
      return await fn();
    } catch (e) {
      this.report.errors.push({ step: name, error: String(e && e.stack ? e.stack : e) });
      return undefined;
    } finally {
      await this.host.settle().catch((e) => this.report.errors.push({ step: `${name} (settle)`, error: String(e) }));
    }
  }

  async start() {
    // First start: the terms prompt; "Agree" reloads the window, the second activation runs.
    this.host.activate();
    await waitFor('the reload after agreeing to the terms', () => this.host.reloadRequested);
    this.report.activation = { termsPrompted: stub.record.messages.some((m) => m.items.includes('Agree')) };
    await this.host.reload();
    this.report.activation.commands = [...stub.registry.commands.keys()].sort();
    this.report.activation.inlineProviders = stub.registry.inlineProviders.length;
    const { file, cursor } = workspace(this.cfg);
    this.editor = await vscode.window.showTextDocument(vscode.Uri.file(file), { viewColumn: vscode.ViewColumn.One });
    const end = this.editor.document.lineAt(cursor).text.length;
    this.editor.selection = new vscode.Selection(cursor, end, cursor, end);
  }

  async openPanel() {
    this.panel = new Panel(await stub.openView('rankingChartView'));
    await this.panel.mount();
  }

  async pair(triggerKind) {
    const before = this.network.to('/create_pair').length;
    const entry = await stub.requestInline(triggerKind);
    const calls = this.network.to('/create_pair').slice(before);
    const call = calls[calls.length - 1];
    return { entry, call, pair: call && call.status === 200 ? call.response : null };
  }

  async completionVote(i) {
    const key = i % 3 === 1 ? 'Shift-Tab' : 'Tab';
    type(this.editor, `\n\ndef step_${i}():\n    return `);
    const { entry, pair } = await this.pair(i === 0 ? vscode.InlineCompletionTriggerKind.Automatic : vscode.InlineCompletionTriggerKind.Invoke);
    const vote = { index: i, key, pairId: pair && pair.pairId, shown: entry.items, outcomeStatus: null };
    this.report.votes.push(vote);
    if (!pair) throw new Error(`vote ${i}: no pair was shown`);
    const [top, bottom] = pair.completionItems;
    vote.top = { model: top.model, completionId: top.completionId, completion: top.completion };
    vote.bottom = { model: bottom.model, completionId: bottom.completionId, completion: bottom.completion };
    await waitFor('both shown completions to be logged', () => this.network.done('/add_completion').filter(
      (c) => [top.completionId, bottom.completionId].includes(c.request.completionId)).length === 2);
    if (!keybindingAllowed()) throw new Error(`vote ${i}: Tab is not bound (no inline suggestion visible)`);
    const text = this.editor.document.getText();
    await vscode.commands.executeCommand(key === 'Tab' ? 'arena.selectFirstInlineCompletion' : 'arena.selectSecondInlineCompletion');
    const outcome = await waitFor('the vote', () => this.network.done('/add_completion_outcome').find((c) => c.request.pairId === pair.pairId));
    vote.outcomeStatus = outcome.status;
    vote.acceptedIndex = outcome.request.acceptedIndex;
    await this.host.settle();
    vote.inserted = inserted(text, this.editor.document.getText());
  }

  async singleCompletion() {
    type(this.editor, '\n\nsingle_value = ');
    const { pair } = await this.pair(vscode.InlineCompletionTriggerKind.Invoke);
    if (!pair) throw new Error('single: no pair was shown');
    const [top, bottom] = pair.completionItems;
    await waitFor('both shown completions to be logged', () => this.network.done('/add_completion').filter(
      (c) => [top.completionId, bottom.completionId].includes(c.request.completionId)).length === 2);
    // Type the start of the top completion only: the extension's own cache then offers just it.
    let common = 0;
    while (common < top.completion.length && top.completion[common] === bottom.completion[common]) common += 1;
    const typed = top.completion.slice(0, common + 1);
    type(this.editor, typed);
    const creates = this.network.to('/create_pair').length;
    const entry = await stub.requestInline(vscode.InlineCompletionTriggerKind.Invoke);
    const single = { pairId: pair.pairId, completionId: top.completionId, model: top.model, typed, shown: entry.items,
      fromCache: this.network.to('/create_pair').length === creates, status: null };
    this.report.single = single;
    if (!keybindingAllowed()) throw new Error('single: no inline suggestion visible');
    const text = this.editor.document.getText();
    await vscode.commands.executeCommand('arena.selectFirstInlineCompletion');
    const call = await waitFor('the single outcome', () => this.network.done('/add_single_outcome')[0]);
    single.status = call.status;
    single.sent = { completionId: call.request.completionId, model: call.request.model, privacy: call.request.privacy ?? null };
    await this.host.settle();
    single.inserted = inserted(text, this.editor.document.getText());
  }

  async edit(action, n) {
    const doc = this.editor.document;
    const start = [...Array(doc.lineCount).keys()].find((k) => doc.lineAt(k).text.endsWith(`CODE_TO_EDIT_${this.cfg.marker} ${n}`));
    this.editor.selection = new vscode.Selection(start, 0, start + 3, doc.lineAt(start + 3).text.length);
    this.instruction = `use the builtin EDIT_INSTRUCTION_${this.cfg.marker}`;
    const before = doc.getText();
    const streamed = () => stub.record.commands.filter((c) => c.id === 'setContext' && c.args[0] === 'continue.streamingDiff' && c.args[1] === false).length;
    const streamedBefore = streamed();
    const creates = this.network.to('/create_edit_pair').length;
    await vscode.commands.executeCommand('arena.promptToDiff');
    const call = await waitFor('the edit pair', () => this.network.done('/create_edit_pair')[creates]);
    const record = { action, pairId: call.request.pairId, status: call.status, outcomeStatus: null, selected: [start, start + 3], documentBefore: before };
    this.report.edits.push(record);
    if (call.status !== 200) throw new Error(`edit ${action}: /create_edit_pair answered ${call.status}`);
    const [left, right] = call.response.responseItems;
    record.left = { model: left.model, response: left.response };
    record.right = { model: right.model, response: right.response };
    await waitFor('both diff editors', () => streamed() >= streamedBefore + 2 && stub.bench.pending.size === 0);
    record.diffEditors = stub.bench.visibleTextEditors.map((e) => path.basename(e.document.uri.fsPath));
    const command = { left: 'arena.acceptFirstLLMResponse', right: 'arena.acceptSecondLLMResponse', reject: 'arena.rejectAllResponses' }[action];
    await vscode.commands.executeCommand(command);
    const outcome = await waitFor('the edit vote', () => this.network.done('/add_edit_outcome').find((c) => c.request.pairId === call.response.pairId));
    record.outcomeStatus = outcome.status;
    record.acceptedIndex = outcome.request.acceptedIndex;
    await this.host.settle();
    this.editor = vscode.window.activeTextEditor;
    record.activeFile = path.basename(this.editor.document.uri.fsPath);
    record.documentAfter = this.editor.document.getText();
    record.changed = record.documentAfter !== before;
  }

  snapshotPanel(name) {
    this.report.panel[name] = { display: this.panel.display(), received: [...this.panel.received], messages: stub.record.messages.slice(-3) };
  }

  async register() {
    const before = stub.record.messages.length;
    await this.panel.register(this.cfg.username, this.cfg.metadata);
    await this.host.settle();
    this.report.panel.registration = { messages: stub.record.messages.slice(before), username: this.host.context.globalState.get('username', null) };
  }

  async restart() {
    await this.host.reload();
    await this.openPanel();
  }
}

function inserted(before, after) {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i += 1;
  let j = 0;
  while (j < before.length - i && before[before.length - 1 - j] === after[after.length - 1 - j]) j += 1;
  return after.slice(i, after.length - j);
}

async function main() {
  const a = args();
  const cfg = a.config ? JSON.parse(fs.readFileSync(a.config, 'utf8')) : configFromFlags(a);
  process.env.HOME = path.join(cfg.workdir, 'home'); // the extension's cache lives in ~/.copilot-arena
  fs.mkdirSync(process.env.HOME, { recursive: true });
  const run = new Run(cfg);
  await run.step('start', () => run.start());
  await run.step('panel', () => run.openPanel());
  run.snapshotPanel('initial');
  for (let i = 0; i < (cfg.votes ?? 0); i++) await run.step(`vote ${i}`, () => run.completionVote(i));
  run.snapshotPanel('afterVotes');
  if (cfg.single) await run.step('single', () => run.singleCompletion());
  for (const [n, action] of (cfg.edits || []).entries()) await run.step(`edit ${action}`, () => run.edit(action, n));
  await run.step('refresh panel', () => run.panel.view.fromWebview({ type: 'updateLeaderboard' }));
  run.snapshotPanel('final');
  if (cfg.username) {
    await run.step('register', () => run.register());
    run.snapshotPanel('afterRegister');
    await run.step('restart', () => run.restart());
    run.snapshotPanel('afterRestart');
  }
  const report = run.report;
  report.calls = run.network.calls.map(({ method, path: p, status, error, ms, request, response }) => ({ method, path: p, status, error, ms, request, response }));
  report.messages = stub.record.messages;
  report.statusBar = stub.record.statusBar;
  report.unhandled = run.host.unhandled;
  report.logs = run.host.logs;
  report.activations = run.host.activations;
  if (a.report) fs.writeFileSync(a.report, JSON.stringify(report, null, 1));
  else process.stdout.write(`${JSON.stringify(report, null, 1)}\n`);
  process.exit(0); // the extension's cache keeps a one-minute cleanup timer alive
}

main().catch((e) => {
  process.stderr.write(`driver failed: ${e && e.stack ? e.stack : e}\n`);
  process.exit(2);
});
