// A small stand-in for the `vscode` module, enough of the VS Code extension API for the
// Copilot Arena extension's activate(), its inline completion provider, its commands, its
// configuration, its Personal Statistics webview and its inline-edit diff editors.
//
// The driver (../driver.js) configures it before the bundle is loaded (`configure`), plays
// the user and the editor through `bench` (typing, asking for inline completions the way the
// editor does, opening the panel), and reads what the extension did from `record`.
'use strict';

const fs = require('fs');
const path = require('path');
const types = require('./types');
const { Workbench } = require('./documents');

const { Disposable, EventEmitter, Uri, CancellationTokenSource } = types;

const bench = new Workbench();
const record = { commands: [], messages: [], statusBar: [], contexts: {}, opened: [], inline: [] };
const state = {
  machineId: 'machine',
  settings: {}, // user settings, "arena.serverUrl" -> value
  defaults: {}, // contributed defaults from the extension's package.json
  globalState: new Map(),
  extensionPath: '',
  answers: { message: () => undefined, inputBox: () => undefined },
  onReload: () => {},
};
let registry; // what the extension registered; new per activation (a reload starts afresh)

function freshRegistry() {
  return {
    commands: new Map(),
    inlineProviders: [],
    hoverProviders: [],
    viewProviders: new Map(),
    views: new Map(),
    configListeners: new EventEmitter(),
    decorationTypes: 0,
  };
}
registry = freshRegistry();

function configure(options) {
  const { globalState, ...rest } = options;
  Object.assign(state, rest);
  for (const [k, v] of Object.entries(globalState || {})) state.globalState.set(k, v);
}

// ---------------------------------------------------------------- configuration
function getConfiguration(section) {
  const full = (key) => (section ? `${section}.${key}` : key);
  return {
    get(key, fallback) {
      const k = full(key);
      if (k in state.settings) return structuredClone(state.settings[k]);
      if (k in state.defaults) return structuredClone(state.defaults[k]);
      return fallback;
    },
    has(key) { return full(key) in state.settings || full(key) in state.defaults; },
    inspect(key) { return { key: full(key), defaultValue: state.defaults[full(key)], globalValue: state.settings[full(key)] }; },
    update(key, value) {
      const k = full(key);
      state.settings[k] = value;
      return bench.later(() => {
        registry.configListeners.fire({ affectsConfiguration: (s) => k === s || k.startsWith(`${s}.`) });
      });
    },
  };
}

// ---------------------------------------------------------------- commands
const builtins = {
  setContext: (key, value) => { record.contexts[key] = value; },
  'editor.action.inlineSuggest.trigger': () => { requestInline(0); },
  'editor.action.inlineSuggest.hide': () => { bench.inlineVisible = null; },
  hideSuggestWidget: () => {},
  acceptSelectedSuggestion: () => undefined,
  tab: () => { const ed = bench.activeTextEditor; if (ed) return ed.edit((b) => b.insert(ed.selection.active, '\t')); return undefined; },
  'workbench.action.reloadWindow': () => { state.onReload(); },
  'workbench.action.files.revert': async (uri) => {
    const doc = bench.documents.get((uri || bench.activeTextEditor.document.uri).fsPath);
    if (doc && fs.existsSync(doc.uri.fsPath)) {
      const text = await fs.promises.readFile(doc.uri.fsPath, 'utf8');
      if (text !== doc._text) bench.applyEdits(doc, [{ range: new types.Range(0, 0, doc.lineCount, 0), text }]);
      doc.isDirty = false;
    }
  },
  'default:undo': () => { throw new Error('undo is not emulated'); },
};

const commands = {
  registerCommand(id, handler, thisArg) {
    if (registry.commands.has(id)) throw new Error(`command '${id}' already exists`);
    registry.commands.set(id, thisArg ? handler.bind(thisArg) : handler);
    return new Disposable(() => registry.commands.delete(id));
  },
  registerTextEditorCommand(id, handler) {
    return commands.registerCommand(id, (...args) => handler(bench.activeTextEditor, undefined, ...args));
  },
  executeCommand(id, ...args) {
    record.commands.push({ id, args: args.map(describeArg) });
    const handler = registry.commands.get(id);
    try {
      if (handler) return Promise.resolve(handler(...args));
      if (id in builtins) return bench.later(() => builtins[id](...args));
    } catch (e) {
      return Promise.reject(e);
    }
    return Promise.reject(new Error(`command '${id}' not found`));
  },
  getCommands() { return Promise.resolve([...registry.commands.keys(), ...Object.keys(builtins)]); },
};

function describeArg(a) {
  if (a === null || a === undefined || typeof a !== 'object') return a;
  if (a instanceof Uri) return a.toString();
  return Array.isArray(a) ? `[${a.length} items]` : '{object}';
}

// ---------------------------------------------------------------- inline completions
// What the editor does for inline suggestions: ask every provider at the cursor, cancelling
// the previous request; the suggestion is visible only if the request was not cancelled.
bench.inlineVisible = null;
let inlineSource = null;

function requestInline(triggerKind) {
  const editor = bench.activeTextEditor;
  if (!editor) return Promise.resolve(null);
  if (inlineSource) inlineSource.cancel();
  const source = new CancellationTokenSource();
  inlineSource = source;
  bench.inlineVisible = null;
  const position = editor.selection.active;
  const entry = { triggerKind, line: position.line, character: position.character, items: null, cancelled: false };
  record.inline.push(entry);
  const run = (async () => {
    let items = null;
    for (const provider of registry.inlineProviders) {
      const result = await provider.provideInlineCompletionItems(
        editor.document, position, { triggerKind, selectedCompletionInfo: undefined }, source.token);
      const list = Array.isArray(result) ? result : result && result.items;
      if (list && list.length) { items = list; break; }
    }
    entry.cancelled = source.token.isCancellationRequested;
    if (!entry.cancelled && items) {
      entry.items = items.map((i) => (typeof i.insertText === 'string' ? i.insertText : i.insertText.value));
      bench.inlineVisible = { editor, position, items };
    }
    return entry;
  })();
  return bench.track(run);
}

// ---------------------------------------------------------------- webviews
function makeView(viewType) {
  const received = new EventEmitter();
  const visibility = new EventEmitter();
  const disposed = new EventEmitter();
  const view = {
    viewType,
    title: viewType,
    visible: true,
    posted: [],
    webview: {
      options: {},
      html: '',
      cspSource: 'vscode-webview://stub',
      asWebviewUri: (uri) => uri.with({ scheme: 'vscode-webview' }),
      onDidReceiveMessage: received.event,
      postMessage: (message) => {
        view.posted.push(structuredClone(message));
        if (view.onPosted) bench.later(() => view.onPosted(message));
        return Promise.resolve(true);
      },
    },
    onDidChangeVisibility: visibility.event,
    onDidDispose: disposed.event,
    show() {},
    // The webview's side: a message from its script to the extension; resolves once the
    // extension's (async) handlers are done.
    fromWebview: (message) => bench.track(Promise.all(received.fire(message))),
  };
  return view;
}

async function openView(viewType) {
  const provider = registry.viewProviders.get(viewType);
  if (!provider) throw new Error(`no webview view provider for ${viewType}`);
  const view = makeView(viewType);
  registry.views.set(viewType, view);
  await provider.resolveWebviewView(view, { state: undefined }, new CancellationTokenSource().token);
  return view;
}

// ---------------------------------------------------------------- namespaces
function message(level) {
  return (text, ...items) => {
    const choices = items.filter((i) => typeof i === 'string' || (i && i.title));
    record.messages.push({ level, text, items: choices.map((i) => i.title || i) });
    return Promise.resolve(state.answers.message(level, text, choices));
  };
}

const window = {
  get activeTextEditor() { return bench.activeTextEditor; },
  get visibleTextEditors() { return bench.visibleTextEditors; },
  onDidChangeActiveTextEditor: bench.events.activeEditor.event,
  onDidChangeVisibleTextEditors: bench.events.visibleEditors.event,
  onDidChangeTextEditorSelection: bench.events.selection.event,
  tabGroups: bench.tabGroupsApi(),
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  showInputBox: (options) => Promise.resolve(state.answers.inputBox(options)),
  showQuickPick: () => Promise.resolve(undefined),
  setStatusBarMessage: (text) => { record.statusBar.push(text); return new Disposable(() => {}); },
  createStatusBarItem: () => ({ text: '', tooltip: '', command: undefined, show() { record.statusItem = this.text; }, hide() {}, dispose() {} }),
  createTextEditorDecorationType: () => ({ key: `TextEditorDecorationType${++registry.decorationTypes}`, dispose() {} }),
  createOutputChannel: () => ({ append() {}, appendLine() {}, show() {}, dispose() {} }),
  registerWebviewViewProvider(viewType, provider) {
    registry.viewProviders.set(viewType, provider);
    return new Disposable(() => registry.viewProviders.delete(viewType));
  },
  showTextDocument: (doc, column) => bench.showDocument(doc, column),
};

const workspace = {
  getConfiguration,
  onDidChangeConfiguration: (l, t, d) => registry.configListeners.event(l, t, d),
  onDidChangeTextDocument: bench.events.didChange.event,
  onDidOpenTextDocument: bench.events.didOpen.event,
  onDidCloseTextDocument: bench.events.didClose.event,
  onDidSaveTextDocument: bench.events.didSave.event,
  get textDocuments() { return [...bench.documents.values()]; },
  notebookDocuments: [],
  workspaceFolders: undefined,
  openTextDocument: (target) => bench.openDocument(target),
  async applyEdit(edit) {
    for (const op of edit._ops) {
      if (op.kind === 'text') {
        bench.applyEdits(await bench.openDocument(op.uri), [{ range: op.range, text: op.text }]);
      } else if (op.kind === 'delete') {
        if (fs.existsSync(op.uri.fsPath)) await fs.promises.rm(op.uri.fsPath, { recursive: !!(op.options && op.options.recursive) });
        else if (!(op.options && op.options.ignoreIfNotExists)) return false;
      }
    }
    return true;
  },
  fs: {
    createDirectory: (uri) => fs.promises.mkdir(uri.fsPath, { recursive: true }).then(() => undefined),
    writeFile: (uri, content) => fs.promises.writeFile(uri.fsPath, content),
    readFile: (uri) => fs.promises.readFile(uri.fsPath),
    async stat(uri) {
      try {
        const s = await fs.promises.stat(uri.fsPath);
        return { type: s.isDirectory() ? 2 : 1, size: s.size, ctime: s.ctimeMs, mtime: s.mtimeMs };
      } catch {
        throw types.FileSystemError.FileNotFound(uri.toString());
      }
    },
    async delete(uri, options) {
      try {
        await fs.promises.rm(uri.fsPath, { recursive: !!(options && options.recursive) });
      } catch {
        throw types.FileSystemError.FileNotFound(uri.toString());
      }
    },
  },
};

class WorkspaceEdit {
  constructor() { this._ops = []; }
  replace(uri, range, text) { this._ops.push({ kind: 'text', uri, range, text }); }
  insert(uri, position, text) { this._ops.push({ kind: 'text', uri, range: new types.Range(position, position), text }); }
  delete(uri, range) { this._ops.push({ kind: 'text', uri, range, text: '' }); }
  deleteFile(uri, options) { this._ops.push({ kind: 'delete', uri, options }); }
  get size() { return this._ops.length; }
}

const languages = {
  registerInlineCompletionItemProvider(selector, provider) {
    registry.inlineProviders.push(provider);
    return new Disposable(() => { registry.inlineProviders = registry.inlineProviders.filter((p) => p !== provider); });
  },
  registerHoverProvider(selector, provider) {
    registry.hoverProviders.push(provider);
    return new Disposable(() => {});
  },
};

const env = {
  get machineId() { return state.machineId; },
  appName: 'Visual Studio Code (stand-in)',
  language: 'en',
  uriScheme: 'vscode',
  sessionId: 'stub-session',
  openExternal: (uri) => { record.opened.push(String(uri)); return Promise.resolve(true); },
};

const extensions = { getExtension: () => undefined, all: [] };

function makeContext() {
  const storage = path.join(state.userDataDir || path.join(state.extensionPath, '.user-data'));
  return {
    subscriptions: [],
    extensionPath: state.extensionPath,
    extensionUri: Uri.file(state.extensionPath),
    globalStorageUri: Uri.file(path.join(storage, 'globalStorage')),
    storageUri: Uri.file(path.join(storage, 'workspaceStorage')),
    logUri: Uri.file(path.join(storage, 'logs')),
    extensionMode: types.ExtensionMode.Production,
    asAbsolutePath: (p) => path.join(state.extensionPath, p),
    globalState: memento(state.globalState),
    workspaceState: memento(new Map()),
    secrets: secretStorage(),
  };
}

function memento(map) {
  return {
    get: (key, fallback) => (map.has(key) ? structuredClone(map.get(key)) : fallback),
    update: (key, value) => { if (value === undefined) map.delete(key); else map.set(key, structuredClone(value)); return Promise.resolve(); },
    keys: () => [...map.keys()],
    setKeysForSync: () => {},
  };
}

function secretStorage() {
  const secrets = new Map();
  const changed = new EventEmitter();
  return {
    get: (key) => Promise.resolve(secrets.get(key)),
    store: (key, value) => { secrets.set(key, value); changed.fire({ key }); return Promise.resolve(); },
    delete: (key) => { secrets.delete(key); changed.fire({ key }); return Promise.resolve(); },
    onDidChange: changed.event,
  };
}

// A reload of the window: everything the extension registered goes, settings, global state
// and the files stay.
function reset() {
  registry = freshRegistry();
  if (inlineSource) inlineSource.cancel();
  bench.inlineVisible = null;
}

module.exports = {
  ...types,
  WorkspaceEdit,
  commands,
  window,
  workspace,
  languages,
  env,
  extensions,
  version: '1.85.0',
  // The driver's handles (not part of the VS Code API).
  __stub: { bench, record, state, configure, makeContext, reset, requestInline, openView, get registry() { return registry; } },
};
