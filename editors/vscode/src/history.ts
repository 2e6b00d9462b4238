// The chat input's history: the questions sent from the chat view, newest
// last, kept per workspace (the extension's workspaceState) and not per
// session, as Copilot Chat and a shell keep theirs: a question asked in one
// session is at hand with Up in the next (the usual reason to go back to
// one). The page (media/history.js) walks it with Up and Down; this keeps
// it across reloads. No dependency on vscode beyond a Memento's shape.

/** The questions kept, at most: the oldest go first. */
export const historyLimit = 100;
/** A question longer than this (a pasted log) is not kept. */
export const historyMaxChars = 20_000;

const key = "ctxls.inputHistory";

/** The list with text added as the newest; a question sent twice in a row is kept once, a blank one not at all. */
export function remember(list: readonly string[], text: string, limit = historyLimit): string[] {
  if (!text.trim() || text.length > historyMaxChars) return [...list];
  const out = list[list.length - 1] === text ? [...list] : [...list, text];
  return out.slice(Math.max(0, out.length - limit));
}

interface Memento {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export class InputHistory {
  constructor(private readonly store: Memento) {}

  /** The questions sent, oldest first. */
  list(): string[] {
    const v = this.store.get<unknown>(key);
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
  }

  add(text: string): Thenable<void> {
    return this.store.update(key, remember(this.list(), text));
  }
}
