// The code blocks of the answers put into the editor the user last worked
// in: Insert (at the cursor, as a paste) and Apply (the selection replaced,
// else the block inserted at the cursor, or a file's whole new text when
// the block names the file and is about as long as it; apply.ts). Apply
// goes by the session's review mode as the model's edits do: in `ask` the
// change opens in the same review diff (review.ts), your current text,
// unsaved edits included, against it, and is made only when accepted; in
// `auto` it is made at once; in `off` nothing is changed. A change is made
// to the buffer, unsaved, as one edit Undo takes back.
import * as path from "node:path";
import * as vscode from "vscode";
import { applyReplacements, DocChange, endsAfter, followChange, isWholeFile, Replacement, spotReplacements, wholeFileReplacement } from "./apply";
import { baseName, ReviewMode } from "./protocol";
import { Reviews } from "./review";

/** What the code blocks need of the extension. */
export interface CodeBlockHost {
  /** The text editor the user last worked in, even when the chat view has focus. */
  currentEditor(): vscode.TextEditor | undefined;
  /** The session's review mode. */
  reviewMode(): ReviewMode;
  /** Whether a document is the user's file (not the editor's own, nor ctxls's). */
  syncable(uri: vscode.Uri): boolean;
}

/** What Apply says in the `off` mode, and its button. */

export class CodeBlocks {
  constructor(
    private readonly host: CodeBlockHost,
    private readonly reviews: Reviews,
  ) {}

  /** The editor the user last worked in, shown (a live editor to edit in), or undefined after saying what to do. */
  private async editorFor(what: string): Promise<vscode.TextEditor | undefined> {
    const e = this.host.currentEditor();
    if (!e) {
      vscode.window.showInformationMessage(`ctxls: open a file in the editor first; ${what}`);
      return undefined;
    }
    return vscode.window.showTextDocument(e.document, { viewColumn: e.viewColumn ?? vscode.ViewColumn.Active, preserveFocus: false });
  }

  /** Insert: the block at the cursor (each cursor; a selection is replaced), as one edit Undo takes back. */
  async insert(text: string): Promise<void> {
    const e = await this.editorFor("Insert puts the code block at its cursor.");
    if (!e) return;
    const selections = e.selections;
    // At the start of a line the block comes with its line break; inside a line, without it.
    const ok = await e.edit((b) => selections.forEach((s) => b.replace(s, s.start.character === 0 ? text : text.replace(/\r?\n$/, ""))));
    if (!ok) throw new Error(`the code could not be inserted into ${baseName(e.document.uri.fsPath)}`);
  }

  /**
   * Apply: in the editor the user last worked in, the selection replaced
   * by the block, else the block inserted at the cursor; a block whose
   * fence names a file (named) and is about as long as it is that file's
   * whole new text. Applied at once in the auto review mode, else shown as
   * a diff first: "off" takes the model's edit tools away, but Apply is
   * the user's own click, so there it is reviewed as in "ask".
   */
  async apply(block: string, named?: string): Promise<void> {
    const mode = this.host.reviewMode();
    const target = await this.target(block, named);
    if (!target) return;
    const { doc, reps, what } = target;
    const name = baseName(doc.uri.fsPath);
    const before = doc.getText();
    const proposed = applyReplacements(before, reps);
    if (proposed === before) {
      vscode.window.showInformationMessage(`ctxls: ${name} already has that text; Apply changed nothing.`);
      return;
    }
    if (mode === "auto") {
      await this.make(doc, reps);
      vscode.window.setStatusBarMessage(`ctxls: applied the code block to ${name} (${what}; unsaved, Undo takes it back)`, 4000);
      return;
    }
    // Ask: the diff first. The replacements follow what the user types
    // meanwhile; typing into the text they replace leaves them unmade.
    let following: Replacement[] | undefined = reps;
    const sub = vscode.workspace.onDidChangeTextDocument((ev) => {
      if (ev.document !== doc) return;
      for (const c of ev.contentChanges) {
        if (!following) break;
        following = followChange(following, { offset: c.rangeOffset, length: c.rangeLength, text: c.text } satisfies DocChange);
      }
    });
    let decision;
    try {
      const review = this.reviews.show({ kind: "block", path: doc.uri.fsPath, original: doc.uri, proposed, title: `${name}: apply code block (ctxls)` });
      decision = await review.decision;
    } finally {
      sub.dispose();
    }
    if (decision === "reject") {
      vscode.window.setStatusBarMessage(`ctxls: the code block was not applied; ${name} is as it was`, 4000);
      return;
    }
    if (!following) {
      vscode.window.showWarningMessage(`ctxls: the text the code block replaces in ${name} changed while it waited for review; nothing was applied. Apply it again.`);
      return;
    }
    await this.make(doc, following);
  }

  /**
   * Where Apply puts the block: a file it names whole, else the selections
   * or cursors of the editor last worked in; undefined after saying why
   * there is none.
   */
  private async target(block: string, named?: string): Promise<{ doc: vscode.TextDocument; reps: Replacement[]; what: string } | undefined> {
    const e = this.host.currentEditor();
    const selected = !!e && e.selections.some((s) => !s.isEmpty);
    if (!selected && named) {
      const uri = await this.namedFile(named, e?.document.uri);
      const doc = uri && (e?.document.uri.toString() === uri.toString() ? e.document : await vscode.workspace.openTextDocument(uri));
      if (doc && isWholeFile(block, doc.getText())) return { doc, reps: [wholeFileReplacement(doc.getText(), block)], what: "the whole file" };
    }
    if (!e) {
      vscode.window.showInformationMessage("ctxls: open a file in the editor first; Apply puts the code block in place of its selection, or at its cursor.");
      return undefined;
    }
    const doc = e.document;
    const spots = e.selections.map((s) => ({ start: doc.offsetAt(s.start), end: doc.offsetAt(s.end), endsAtLineStart: s.end.character === 0 }));
    return { doc, reps: spotReplacements(block, spots), what: selected ? "in place of the selection" : "at the cursor" };
  }

  /** The existing user file a block's fence names: absolute, or relative to a workspace folder (the current file's first). */
  private async namedFile(named: string, current?: vscode.Uri): Promise<vscode.Uri | undefined> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri);
    const own = current && vscode.workspace.getWorkspaceFolder(current)?.uri;
    const roots = own ? [own, ...folders.filter((f) => f.toString() !== own.toString())] : folders;
    const candidates = path.isAbsolute(named) ? [vscode.Uri.file(named)] : roots.map((r) => vscode.Uri.joinPath(r, named));
    for (const c of candidates) {
      if (!this.host.syncable(c)) continue;
      const isFile = await vscode.workspace.fs.stat(c).then(
        (st) => (st.type & vscode.FileType.File) !== 0,
        () => false,
      );
      if (isFile) return c;
    }
    return undefined;
  }

  /** Makes the replacements in the buffer (unsaved) as one edit, shows it, and puts the cursor after the block. */
  private async make(doc: vscode.TextDocument, reps: Replacement[]): Promise<void> {
    const edit = new vscode.WorkspaceEdit();
    for (const r of reps) edit.replace(doc.uri, new vscode.Range(doc.positionAt(r.start), doc.positionAt(r.end)), r.text);
    if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`the code block could not be applied to ${baseName(doc.uri.fsPath)}`);
    const shown = vscode.window.visibleTextEditors.find((v) => v.document === doc);
    const e = await vscode.window.showTextDocument(doc, { viewColumn: shown?.viewColumn ?? vscode.ViewColumn.Active, preview: false });
    const ends = endsAfter(reps).map((o) => doc.positionAt(o));
    if (ends.length) {
      e.selections = ends.map((p) => new vscode.Selection(p, p));
      e.revealRange(new vscode.Range(ends[0], ends[0]));
    }
  }
}
