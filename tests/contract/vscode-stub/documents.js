// Text documents, editors, editor groups and tabs of the stand-in `vscode` module.
//
// Documents are backed by real files in a scratch workspace (the extension reads and writes
// them both through `vscode.workspace.fs` and through Node's `fs`). As in VS Code, an
// editor's `edit()` runs its callback at once but applies the edits later (after an IPC round
// trip in the real editor; here on the next turn of the event loop) and resolves `true`;
// ranges are validated (clamped) the way TextDocument.validateRange does; cursors behind an
// edit move with it, a cursor at an insertion point ends up after the inserted text.
'use strict';

const fs = require('fs');
const path = require('path');
const { Position, Range, Selection, Uri, TabInputText, EventEmitter } = require('./types');

const LANGUAGES = { '.py': 'python', '.ts': 'typescript', '.js': 'javascript', '.txt': 'plaintext', '.go': 'go' };

class TextDocument {
  constructor(bench, uri, text) {
    this._bench = bench;
    this.uri = uri;
    this.languageId = LANGUAGES[path.extname(uri.fsPath)] || 'plaintext';
    this._text = text;
    this.version = 1;
    this.isDirty = false;
    this.isClosed = false;
    this.isUntitled = false;
    this.eol = 1;
  }
  get fileName() { return this.uri.fsPath; }
  get lineCount() { return this._lines().length; }
  _lines() { return this._text.split('\n'); }
  validatePosition(p) {
    const lines = this._lines();
    if (p.line < 0) return new Position(0, 0);
    if (p.line >= lines.length) return new Position(lines.length - 1, lines[lines.length - 1].length);
    return new Position(p.line, Math.max(0, Math.min(p.character, lines[p.line].length)));
  }
  validateRange(r) { return new Range(this.validatePosition(r.start), this.validatePosition(r.end)); }
  offsetAt(p) {
    const v = this.validatePosition(p);
    const lines = this._lines();
    let offset = 0;
    for (let i = 0; i < v.line; i++) offset += lines[i].length + 1;
    return offset + v.character;
  }
  positionAt(offset) {
    const lines = this._lines();
    let rest = Math.max(0, Math.min(offset, this._text.length));
    for (let i = 0; i < lines.length; i++) {
      if (rest <= lines[i].length) return new Position(i, rest);
      rest -= lines[i].length + 1;
    }
    return new Position(lines.length - 1, lines[lines.length - 1].length);
  }
  getText(range) {
    if (!range) return this._text;
    const r = this.validateRange(range);
    return this._text.slice(this.offsetAt(r.start), this.offsetAt(r.end));
  }
  lineAt(lineOrPosition) {
    const n = typeof lineOrPosition === 'number' ? lineOrPosition : lineOrPosition.line;
    const lines = this._lines();
    if (n < 0 || n >= lines.length) throw new Error('Illegal value for `line`');
    const text = lines[n];
    const firstNonWs = text.search(/\S/);
    return {
      lineNumber: n,
      text,
      range: new Range(n, 0, n, text.length),
      rangeIncludingLineBreak: n < lines.length - 1 ? new Range(n, 0, n + 1, 0) : new Range(n, 0, n, text.length),
      firstNonWhitespaceCharacterIndex: firstNonWs < 0 ? text.length : firstNonWs,
      isEmptyOrWhitespace: firstNonWs < 0,
    };
  }
  async save() {
    await fs.promises.writeFile(this.uri.fsPath, this._text);
    this.isDirty = false;
    this._bench.events.didSave.fire(this);
    return true;
  }
}

class TextEditorEdit {
  constructor() { this.edits = []; }
  replace(location, value) { this.edits.push({ range: location instanceof Position ? new Range(location, location) : location, text: value }); }
  insert(position, value) { this.edits.push({ range: new Range(position, position), text: value }); }
  delete(range) { this.edits.push({ range, text: '' }); }
  setEndOfLine() {}
}

class TextEditor {
  constructor(bench, document, viewColumn) {
    this._bench = bench;
    this.document = document;
    this.viewColumn = viewColumn;
    this._selections = [new Selection(0, 0, 0, 0)];
    this.options = { tabSize: 4, insertSpaces: true };
    this.decorations = {};
    this.revealed = [];
  }
  get selection() { return this._selections[0]; }
  set selection(s) { this.selections = [s]; }
  get selections() { return this._selections; }
  set selections(list) {
    this._selections = list.map((s) => new Selection(this.document.validatePosition(s.anchor), this.document.validatePosition(s.active)));
    this._bench.fireSelection(this, 3);
  }
  get visibleRanges() { return [new Range(0, 0, this.document.lineCount, 0)]; }
  edit(callback) {
    const builder = new TextEditorEdit();
    callback(builder);
    return this._bench.later(() => {
      if (this.document.isClosed) return false;
      this._bench.applyEdits(this.document, builder.edits);
      return true;
    });
  }
  setDecorations(type, ranges) { this.decorations[type.key] = ranges.map((r) => (r.range ? r.range : r)); }
  revealRange(range, revealType) { this.revealed.push({ range, revealType }); }
  show() {}
  hide() {}
}

// Moves an offset of the text before `edits` (sorted, original coordinates) to the text after.
function moveOffset(x, edits) {
  let shift = 0;
  for (const e of edits) {
    if (x > e.end) shift += e.text.length - (e.end - e.start);
    else if (x >= e.start) return e.start + shift + e.text.length;
    else break;
  }
  return x + shift;
}

class Workbench {
  constructor() {
    this.events = {
      didChange: new EventEmitter(),
      didOpen: new EventEmitter(),
      didClose: new EventEmitter(),
      didSave: new EventEmitter(),
      activeEditor: new EventEmitter(),
      visibleEditors: new EventEmitter(),
      selection: new EventEmitter(),
      tabs: new EventEmitter(),
    };
    this.documents = new Map();
    this.groups = new Map();
    this.activeColumn = 1;
    this.pending = new Set();
  }

  // Runs `fn` on a later turn of the event loop (like a round trip to the renderer); tracked
  // so the driver can wait until nothing is in flight.
  later(fn) {
    const p = new Promise((resolve, reject) => setImmediate(() => {
      try { resolve(fn()); } catch (e) { reject(e); }
    }));
    this.track(p);
    return p;
  }

  track(p) {
    this.pending.add(p);
    const done = () => this.pending.delete(p);
    p.then(done, done);
    return p;
  }

  async openDocument(target) {
    const fsPath = typeof target === 'string' ? path.resolve(target) : target.fsPath;
    const open = this.documents.get(fsPath);
    if (open && !open.isClosed) return open;
    const text = await fs.promises.readFile(fsPath, 'utf8');
    const doc = new TextDocument(this, Uri.file(fsPath), text);
    this.documents.set(fsPath, doc);
    this.events.didOpen.fire(doc);
    return doc;
  }

  applyEdits(doc, edits) {
    const spans = edits
      .map((e) => {
        const r = doc.validateRange(e.range);
        return { start: doc.offsetAt(r.start), end: doc.offsetAt(r.end), text: e.text, range: r };
      })
      .sort((a, b) => a.start - b.start || a.end - b.end);
    for (let i = 1; i < spans.length; i++) {
      if (spans[i].start < spans[i - 1].end) throw new Error('Overlapping ranges are not allowed!');
    }
    if (spans.length === 0) return;
    const editors = this.editorsOf(doc).map((ed) => ({
      ed,
      sels: ed.selections.map((s) => [doc.offsetAt(s.anchor), doc.offsetAt(s.active)]),
    }));
    let text = doc._text;
    for (const s of [...spans].reverse()) text = text.slice(0, s.start) + s.text + text.slice(s.end);
    doc._text = text;
    doc.version += 1;
    doc.isDirty = true;
    const contentChanges = spans.map((s) => ({ range: s.range, rangeOffset: s.start, rangeLength: s.end - s.start, text: s.text }));
    this.events.didChange.fire({ document: doc, contentChanges, reason: undefined });
    for (const { ed, sels } of editors) {
      ed._selections = sels.map(([a, b]) => new Selection(doc.positionAt(moveOffset(a, spans)), doc.positionAt(moveOffset(b, spans))));
      this.fireSelection(ed, undefined);
    }
  }

  fireSelection(editor, kind) {
    this.events.selection.fire({ textEditor: editor, selections: editor.selections, kind });
  }

  group(column) {
    if (!this.groups.has(column)) this.groups.set(column, { viewColumn: column, tabs: [], activeTab: undefined, isActive: false });
    return this.groups.get(column);
  }

  editorsOf(doc) { return this.visibleTextEditors.filter((e) => e.document === doc); }

  get visibleTextEditors() {
    return [...this.groups.values()].filter((g) => g.activeTab).map((g) => g.activeTab._editor);
  }

  get activeTextEditor() {
    const g = this.groups.get(this.activeColumn);
    return g && g.activeTab ? g.activeTab._editor : undefined;
  }

  async showDocument(target, columnOrOptions) {
    const doc = target instanceof TextDocument ? target : await this.openDocument(target);
    const options = typeof columnOrOptions === 'object' && columnOrOptions !== null ? columnOrOptions : { viewColumn: columnOrOptions };
    const column = options.viewColumn > 0 ? options.viewColumn : this.activeColumn;
    const before = this.activeTextEditor;
    const g = this.group(column);
    let tab = g.tabs.find((t) => t._editor.document === doc);
    if (!tab) {
      tab = { label: path.basename(doc.uri.fsPath), input: new TabInputText(doc.uri), group: g, isPinned: false, isPreview: false, _editor: new TextEditor(this, doc, column) };
      g.tabs.push(tab);
    }
    g.activeTab = tab;
    if (!options.preserveFocus || !this.activeTextEditor) this.activeColumn = column;
    for (const grp of this.groups.values()) grp.isActive = grp.viewColumn === this.activeColumn;
    if (options.selection) tab._editor.selection = new Selection(options.selection.start, options.selection.end);
    if (this.activeTextEditor !== before) this.events.activeEditor.fire(this.activeTextEditor);
    this.events.visibleEditors.fire(this.visibleTextEditors);
    return tab._editor;
  }

  closeTabs(tabs) {
    const before = this.activeTextEditor;
    for (const tab of tabs) {
      const g = tab.group;
      g.tabs = g.tabs.filter((t) => t !== tab);
      if (g.activeTab === tab) g.activeTab = g.tabs[g.tabs.length - 1];
      const doc = tab._editor.document;
      const stillShown = [...this.groups.values()].some((grp) => grp.tabs.some((t) => t._editor.document === doc));
      if (!stillShown) {
        doc.isClosed = true;
        this.documents.delete(doc.uri.fsPath);
        this.later(() => this.events.didClose.fire(doc));
      }
    }
    if (!this.activeTextEditor) {
      const g = [...this.groups.values()].find((grp) => grp.activeTab);
      if (g) this.activeColumn = g.viewColumn;
    }
    if (this.activeTextEditor !== before) this.events.activeEditor.fire(this.activeTextEditor);
    this.events.visibleEditors.fire(this.visibleTextEditors);
    return true;
  }

  tabGroupsApi() {
    const bench = this;
    const view = (g) => ({
      viewColumn: g.viewColumn,
      isActive: g.viewColumn === bench.activeColumn,
      activeTab: g.activeTab,
      tabs: g.tabs.map((t) => Object.assign(t, { isActive: g.activeTab === t, isDirty: t._editor.document.isDirty })),
    });
    return {
      get all() { return [...bench.groups.values()].map(view); },
      get activeTabGroup() { return view(bench.group(bench.activeColumn)); },
      onDidChangeTabs: bench.events.tabs.event,
      onDidChangeTabGroups: bench.events.tabs.event,
      close: (tabOrTabs) => bench.later(() => bench.closeTabs((Array.isArray(tabOrTabs) ? tabOrTabs : [tabOrTabs]).filter((t) => t && t._editor))),
    };
  }
}

module.exports = { TextDocument, TextEditor, Workbench };
