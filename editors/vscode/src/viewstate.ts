// What the chat view shows, with no dependency on vscode: the extension keeps
// one ViewState and sends it (or one turn of it) to the webview, which only
// draws. The node tests check the folding rules here.
import { baseName, Context, ShownTurn, Span } from "./protocol";
import { escapeHtml, renderMarkdown } from "./markdown";

/** A file the model (or the user) put into the session folder. */
export interface SessionFile {
  subdir: string;
  name: string;
  by?: string;
}

/** One turn as the webview draws it. */
export interface ViewTurn {
  question: string;
  questionId?: number;
  /** The stored messages of the turn (a search hit names one of them). */
  ids?: number[];
  /** The answer as HTML (markdown-it, HTML disabled). */
  html: string;
  /** "streaming", "done", "cancelled", "interrupted", "error" or "length". */
  status: string;
  error?: string;
  activity?: string;
  files: SessionFile[];
  /** The newest summary ends with this turn: a marker follows it. */
  compacted?: Span;
}

export interface ContextItem {
  label: string;
  value: string;
  /** Set for files: clicking opens it. */
  path?: string;
  missing?: boolean;
}

export interface ContextSet {
  name: string;
  items: ContextItem[];
}

export interface Banner {
  text: string;
  /** A button: its label and the message it posts back. */
  action?: { label: string; command: string };
}

export interface ViewState {
  title: string;
  sessionId?: string;
  busy: boolean;
  turns: ViewTurn[];
  context: ContextSet[];
  sessionFiles: SessionFile[];
  banner?: Banner;
  /** A message id to scroll to (once) and mark (a search hit), until the next question. */
  highlight?: number;
  /** Bumped to make the view scroll the context card into sight. */
  revealContext?: number;
}

export function emptyState(title = "New session"): ViewState {
  return { title, busy: false, turns: [], context: [], sessionFiles: [] };
}

/** The value that stands for a whole set (the applet is removed as one). */
export const wholeSet = "*";

/**
 * The applet set (["editor", "file=/a/b.go", "line=42", "selection=42-49"])
 * as one item: "editor b.go:42–49", the file clickable.
 */
function appletItem(items: string[]): ContextItem {
  const [slug, ...rest] = items;
  const params: Record<string, string> = {};
  for (const kv of rest) {
    const i = kv.indexOf("=");
    if (i > 0) params[kv.slice(0, i)] = kv.slice(i + 1);
  }
  let label = slug ?? "applet";
  if (params.file) {
    const lines = params.selection ? params.selection.replace("-", "–") : params.line;
    label += ` ${baseName(params.file)}${lines ? ":" + lines : ""}`;
  } else if (rest.length) label += ` (${rest.join(", ")})`;
  return { label, value: wholeSet, path: params.file };
}

/** The context sets as the view lists them: files first, then the others by name. */
export function contextSets(context: Context, missing: string[] = []): ContextSet[] {
  const names = Object.keys(context).filter((n) => (context[n] ?? []).length > 0);
  names.sort((a, b) => (a === "files" ? -1 : b === "files" ? 1 : a.localeCompare(b)));
  return names.map((name) => ({
    name,
    items:
      name === "applet"
        ? [appletItem(context[name])]
        : context[name].map((v) => (name === "files" ? { label: baseName(v), value: v, path: v, missing: missing.includes(v) } : { label: v, value: v })),
  }));
}

/** A stored or streaming turn for the view. */
export function viewTurn(t: ShownTurn): ViewTurn {
  return { question: t.question, questionId: t.questionId, ids: t.ids, html: renderMarkdown(t.answer), status: t.status, error: t.error, files: [], compacted: t.compacted };
}

export { escapeHtml };
