// The "editor view" card (the daemon's applet set: the file and lines the
// editor rested on, captured once it rests) follows the editor when its
// file is closed: the daemon hears of views, not of closed editors, so its
// last view would stay, naming a file no longer shown, and go with every
// question. When the file's last tab closes, the set is emptied (the card
// goes); a file shown next is captured as usual (the card updates).
import * as vscode from "vscode";
import { ContextSet } from "./viewstate";

/** The file the editor view card names, if any. */
export function appletFile(context: ContextSet[]): string | undefined {
  return context.find((s) => s.name === "applet")?.items[0]?.path;
}

/** Whether a tab of any group shows the file (as text, in a diff, or as a notebook). */
function shown(fsPath: string): boolean {
  const same = (u: vscode.Uri | undefined) => !!u && u.scheme === "file" && u.fsPath === fsPath;
  return vscode.window.tabGroups.all.some((g) =>
    g.tabs.some((t) => {
      const i = t.input;
      if (i instanceof vscode.TabInputText || i instanceof vscode.TabInputNotebook) return same(i.uri);
      if (i instanceof vscode.TabInputTextDiff) return same(i.original) || same(i.modified);
      return false;
    }),
  );
}

export class EditorViewCard implements vscode.Disposable {
  /** Files whose last tab closed in this window, until shown again: a view of one captured late is dropped too. */
  private readonly closed = new Set<string>();
  private readonly sub: vscode.Disposable;

  /**
   * file: the file the card names now; drop: empties the session's applet
   * set (ctxls.context.set).
   */
  constructor(
    private readonly file: () => string | undefined,
    private readonly drop: () => void,
  ) {
    this.sub = vscode.window.tabGroups.onDidChangeTabs((e) => {
      for (const t of [...e.opened, ...e.changed]) for (const p of paths(t)) this.closed.delete(p);
      for (const t of e.closed) for (const p of paths(t)) if (!shown(p)) this.closed.add(p);
      if (e.closed.length) this.check();
    });
  }

  /** The context changed (a view captured): a card naming a file closed here goes. */
  contextChanged(): void {
    this.check();
  }

  private check(): void {
    const f = this.file();
    if (f && this.closed.has(f) && !shown(f)) this.drop();
  }

  dispose(): void {
    this.sub.dispose();
  }
}

function paths(t: vscode.Tab): string[] {
  const i = t.input;
  const out: vscode.Uri[] = [];
  if (i instanceof vscode.TabInputText || i instanceof vscode.TabInputNotebook) out.push(i.uri);
  else if (i instanceof vscode.TabInputTextDiff) out.push(i.original, i.modified);
  return out.filter((u) => u.scheme === "file").map((u) => u.fsPath);
}
