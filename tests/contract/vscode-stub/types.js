// The value types of the `vscode` API that the extension constructs or compares: positions,
// ranges, selections, URIs, events, cancellation, and the small classes and enums it news up.
// Behaviour follows VS Code's own definitions (extHostTypes.ts) where the extension relies on it
// (Range normalises its ends, Position.translate/with, Uri.joinPath/fsPath).
'use strict';

const path = require('path');

class Position {
  constructor(line, character) {
    if (line < 0 || character < 0) {
      throw new Error('Illegal argument: line and character must be non-negative');
    }
    this.line = line;
    this.character = character;
  }
  isBefore(o) { return this.line < o.line || (this.line === o.line && this.character < o.character); }
  isBeforeOrEqual(o) { return this.isBefore(o) || this.isEqual(o); }
  isAfter(o) { return !this.isBeforeOrEqual(o); }
  isAfterOrEqual(o) { return !this.isBefore(o); }
  isEqual(o) { return this.line === o.line && this.character === o.character; }
  compareTo(o) { return this.isBefore(o) ? -1 : this.isEqual(o) ? 0 : 1; }
  translate(lineDelta = 0, characterDelta = 0) {
    if (typeof lineDelta === 'object' && lineDelta !== null) {
      characterDelta = lineDelta.characterDelta ?? 0;
      lineDelta = lineDelta.lineDelta ?? 0;
    }
    return new Position(this.line + lineDelta, this.character + characterDelta);
  }
  with(line, character) {
    if (typeof line === 'object' && line !== null) {
      character = line.character;
      line = line.line;
    }
    return new Position(line ?? this.line, character ?? this.character);
  }
}

function toPosition(p) {
  return p instanceof Position ? p : new Position(p.line, p.character);
}

class Range {
  constructor(a, b, c, d) {
    let start;
    let end;
    if (typeof a === 'number') {
      start = new Position(a, b);
      end = new Position(c, d);
    } else {
      start = toPosition(a);
      end = toPosition(b);
    }
    if (end.isBefore(start)) {
      [start, end] = [end, start];
    }
    this._start = start;
    this._end = end;
  }
  get start() { return this._start; }
  get end() { return this._end; }
  get isEmpty() { return this._start.isEqual(this._end); }
  get isSingleLine() { return this._start.line === this._end.line; }
  contains(x) {
    if (x instanceof Range) {
      return this.contains(x.start) && this.contains(x.end);
    }
    return x.isAfterOrEqual(this._start) && x.isBeforeOrEqual(this._end);
  }
  isEqual(o) { return this._start.isEqual(o.start) && this._end.isEqual(o.end); }
  with(start, end) {
    if (start && !(start instanceof Position) && typeof start === 'object') {
      end = start.end;
      start = start.start;
    }
    return new Range(start ?? this._start, end ?? this._end);
  }
}

class Selection extends Range {
  constructor(a, b, c, d) {
    let anchor;
    let active;
    if (typeof a === 'number') {
      anchor = new Position(a, b);
      active = new Position(c, d);
    } else {
      anchor = toPosition(a);
      active = toPosition(b);
    }
    super(anchor, active);
    this.anchor = anchor;
    this.active = active;
  }
  get isReversed() { return this.anchor.isAfter(this.active); }
}

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme;
    this.authority = authority || '';
    this.path = p || '/';
    this.query = query || '';
    this.fragment = fragment || '';
  }
  get fsPath() { return this.scheme === 'file' ? path.normalize(this.path) : this.path; }
  with(change) {
    return new Uri(
      change.scheme ?? this.scheme,
      change.authority ?? this.authority,
      change.path ?? this.path,
      change.query ?? this.query,
      change.fragment ?? this.fragment,
    );
  }
  toString() {
    const q = this.query ? `?${this.query}` : '';
    const f = this.fragment ? `#${this.fragment}` : '';
    return `${this.scheme}://${this.authority}${this.path}${q}${f}`;
  }
  toJSON() { return this.toString(); }
  static file(p) { return new Uri('file', '', path.resolve(p)); }
  static parse(value) {
    const u = new URL(value);
    return new Uri(u.protocol.replace(/:$/, ''), u.host, decodeURIComponent(u.pathname),
      u.search.replace(/^\?/, ''), u.hash.replace(/^#/, ''));
  }
  static joinPath(base, ...segments) { return base.with({ path: path.posix.join(base.path, ...segments) }); }
  static from(c) { return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment); }
}

class Disposable {
  constructor(fn) { this._fn = fn; }
  dispose() {
    if (this._fn) {
      const fn = this._fn;
      this._fn = undefined;
      fn();
    }
  }
  static from(...items) { return new Disposable(() => items.forEach((d) => d && d.dispose())); }
}

class EventEmitter {
  constructor() {
    this._listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const entry = { fn: thisArg ? listener.bind(thisArg) : listener };
      this._listeners.add(entry);
      const d = new Disposable(() => this._listeners.delete(entry));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  // Returns what the listeners returned, so the driver can await async handlers.
  fire(value) { return [...this._listeners].map((l) => l.fn(value)); }
  get listenerCount() { return this._listeners.size; }
  dispose() { this._listeners.clear(); }
}

class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this._emitter = emitter;
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
  }
  cancel() {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this._emitter.fire(undefined);
    }
  }
  dispose() { this._emitter.dispose(); }
}

class InlineCompletionItem {
  constructor(insertText, range, command) {
    this.insertText = insertText;
    this.range = range;
    this.command = command;
  }
}

class InlineCompletionList {
  constructor(items) { this.items = items; }
}

class Hover {
  constructor(contents, range) {
    this.contents = Array.isArray(contents) ? contents : [contents];
    this.range = range;
  }
}

class MarkdownString {
  constructor(value = '') { this.value = value; }
  appendMarkdown(v) { this.value += v; return this; }
  appendText(v) { this.value += v; return this; }
}

class ThemeColor {
  constructor(id) { this.id = id; }
}

class TabInputText {
  constructor(uri) { this.uri = uri; }
}

class FileSystemError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
  static FileNotFound(what) { return new FileSystemError(`File not found: ${what}`, 'FileNotFound'); }
}

const enums = {
  InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
  NotebookCellKind: { Markup: 1, Code: 2 },
  ViewColumn: { Active: -1, Beside: -2, One: 1, Two: 2, Three: 3 },
  TextEditorRevealType: { Default: 0, InCenter: 1, InCenterIfOutsideViewport: 2, AtTop: 3 },
  DecorationRangeBehavior: { OpenOpen: 0, ClosedClosed: 1, OpenClosed: 2, ClosedOpen: 3 },
  StatusBarAlignment: { Left: 1, Right: 2 },
  ConfigurationTarget: { Global: 1, Workspace: 2, WorkspaceFolder: 3 },
  EndOfLine: { LF: 1, CRLF: 2 },
  TextEditorSelectionChangeKind: { Keyboard: 1, Mouse: 2, Command: 3 },
  FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
  ExtensionMode: { Production: 1, Development: 2, Test: 3 },
  UIKind: { Desktop: 1, Web: 2 },
};

module.exports = {
  Position,
  Range,
  Selection,
  Uri,
  Disposable,
  EventEmitter,
  CancellationTokenSource,
  InlineCompletionItem,
  InlineCompletionList,
  Hover,
  MarkdownString,
  ThemeColor,
  TabInputText,
  FileSystemError,
  ...enums,
};
