// What goes with a question besides its text: the active editor's file (the
// chip above the input, with its selected lines) and the editor's view
// (ctxls/didChangeView), the session's context (files added, shown in the
// header), the session folder's files, and the project's instructions
// files (AGENTS.md, …) the daemon gives the model.
import * as vscode from "vscode";
import type { Controller, Reg, WithClient } from "./extension";
import { mentionable, mentionLimit } from "./mentions";
import { baseName, ContextChanged, InstructionFile, SessionFilesChanged, Subfolders } from "./protocol";
import { PreviewDocs } from "./preview";
import { contextSets, instructionChips, selectedLines, SessionFile, TurnFileChip, turnFileChip } from "./viewstate";

const subdirs = Subfolders;

/**
 * Watches the workspace's instructions files (AGENTS.md in any folder,
 * CLAUDE.md, .github/copilot-instructions.md): created, saved or deleted.
 */
export function watchInstructions(changed: () => void): vscode.Disposable[] {
  const w = vscode.workspace.createFileSystemWatcher("**/{AGENTS.md,CLAUDE.md,copilot-instructions.md}");
  return [w, w.onDidCreate(changed), w.onDidChange(changed), w.onDidDelete(changed)];
}

export class ContextFiles {
  /** The text editor the user last worked in (currentEditor). */
  lastEditor?: vscode.TextEditor;
  private viewTimer?: NodeJS.Timeout;
  /** The document whose chip the user removed: its file stays out of questions until the active editor changes. */
  removedDoc?: string;
  private turnFileTimer?: NodeJS.Timeout;
  /** Counts the looks for the instructions files: only the latest one's answer is shown. */
  private instructionsSeq = 0;
  /** The context's files the instructions chips were last looked up for (a change may bring another folder's AGENTS.md). */
  private instructionsFor?: string;
  private instructionsTimer?: NodeJS.Timeout;

  constructor(private readonly ctl: Controller) {}

  /** ctxls/contextChanged: the session's context (a resume elsewhere shows that session). */
  contextChanged(p: ContextChanged): void {
    if (p.reason === "resume" && p.sessionId !== this.ctl.state.sessionId) {
      void this.ctl.sessions.loadSession(p.sessionId);
      return;
    }
    if (this.ctl.state.sessionId && p.sessionId !== this.ctl.state.sessionId) return;
    if (!this.ctl.state.sessionId) void this.ctl.sessions.adoptSession(p.sessionId);
    this.ctl.state.context = contextSets(p.context, p.missing);
    this.ctl.view.postState();
    this.ctl.editorView.contextChanged();
    // Another file in the context may bring its folder's AGENTS.md.
    if ((p.context.files ?? []).join("\n") !== this.instructionsFor) void this.refreshInstructions();
  }

  /** Whether the active editor's file goes with each question (ctxls.sendActiveFile). */
  private sendActiveFile(): boolean {
    return vscode.workspace.getConfiguration("ctxls").get<boolean>("sendActiveFile", true) !== false;
  }

  /** The active editor's file and selected lines as the chip above the input, or undefined. */
  turnFile(): TurnFileChip | undefined {
    if (!this.sendActiveFile()) return undefined;
    let e = vscode.window.activeTextEditor;
    // A non-text editor in front (the settings, a webview): the text editor last worked in, while it is shown.
    const l = this.lastEditor;
    if (!e && l && !l.document.isClosed) e = vscode.window.visibleTextEditors.find((v) => v.document === l.document);
    // A prompt preview in front: what it previewed still goes (the text editor last worked in, shown or not).
    else if (e?.document.uri.scheme === PreviewDocs.scheme && l && !l.document.isClosed) e = vscode.window.visibleTextEditors.find((v) => v.document === l.document) ?? l;
    if (!e || !this.ctl.syncable(e.document.uri)) return undefined;
    const sel = e.selection;
    const chip = turnFileChip(e.document.uri.fsPath, sel.isEmpty ? undefined : selectedLines(sel.start, sel.end));
    if (this.removedDoc === e.document.uri.toString()) chip.removed = true;
    return chip;
  }

  /** Redraws the chip (selection changes come in bursts: drawn once they rest). */
  turnFileChanged(delay = 80): void {
    if (this.turnFileTimer) clearTimeout(this.turnFileTimer);
    this.turnFileTimer = setTimeout(() => {
      this.ctl.state.turnFile = this.turnFile();
      this.ctl.view.postTurnFile(this.ctl.state.turnFile);
    }, delay);
  }

  /** The turn's files: the chip's, unless removed or turned off. */
  turnFiles(): string[] {
    const f = this.turnFile();
    return f && !f.removed ? [f.item] : [];
  }

  /** The chip's ×: the active editor's file stays out of questions until the active editor changes. */
  removeTurnFile(): void {
    this.removedDoc = this.turnFile()?.path ? vscode.Uri.file(this.turnFile()!.path).toString() : undefined;
    this.turnFileChanged(0);
  }

  /** A click on the removed chip: the file goes with the question again. */
  restoreTurnFile(): void {
    this.removedDoc = undefined;
    this.turnFileChanged(0);
  }

  /** The session folder's files (sources/, results/, …), as the daemon lists them. */
  async sessionFiles(): Promise<SessionFile[]> {
    const c = this.ctl.ctxls;
    if (!c || !this.ctl.state.sessionId) return [];
    const lists = await Promise.all(subdirs.map((subdir) => c.command("ctxls.files.list", { subdir }).catch(() => ({ files: [] as string[] }))));
    return lists.flatMap((l, i) => (l.files ?? []).map((name) => ({ subdir: subdirs[i], name })));
  }

  /** ctxls/sessionFilesChanged: a file added to or removed from the session folder (by the model: listed under its turn too). */
  async sessionFileChanged(p: SessionFilesChanged): Promise<void> {
    if (this.ctl.state.sessionId && p.sessionId !== this.ctl.state.sessionId) return;
    if (!this.ctl.state.sessionId) await this.ctl.sessions.adoptSession(p.sessionId);
    if (p.by === "model") {
      const t = this.ctl.state.turns[this.ctl.state.turns.length - 1];
      if (t && !t.files.some((f) => f.subdir === p.subdir && f.name === p.name)) {
        t.files.push({ subdir: p.subdir, name: p.name, by: p.by });
      }
    }
    this.ctl.state.sessionFiles = await this.sessionFiles();
    this.ctl.view.postState();
  }

  /** The × of a file in the session-files card: its copy in the session folder's sources/ is deleted. */
  async removeSessionFile(name: string): Promise<void> {
    const c = await this.ctl.daemon.need();
    if (!c || !this.ctl.state.sessionId) return;
    await c.command("ctxls.files.remove", { sessionId: this.ctl.state.sessionId, name });
    this.ctl.state.sessionFiles = await this.sessionFiles();
    this.ctl.view.postState();
    vscode.window.setStatusBarMessage(`ctxls: deleted sources/${name} from the session folder`, 4000);
  }

  /**
   * Shows the instructions files the daemon listed (ctxls.context.get or a
   * turn's result) as chips in the header; none while
   * ctxls.projectInstructions is off. files: the context's files they were
   * listed for.
   */
  setInstructions(list: InstructionFile[] | undefined, files?: string[]): void {
    this.instructionsSeq++;
    if (files) this.instructionsFor = files.join("\n");
    const on = vscode.workspace.getConfiguration("ctxls").get<boolean>("projectInstructions") !== false;
    // The daemon gives an open file's text from the editor; it differs from
    // the disk's only while the document has unsaved edits.
    const dirty = (p: string) => vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.scheme === "file" && d.uri.fsPath === p);
    const given = (list ?? []).map((f) => ({ ...f, unsaved: f.unsaved && dirty(f.path) }));
    this.ctl.state.instructions = on ? instructionChips(given, (p) => vscode.workspace.asRelativePath(p)) : [];
  }

  /** Asks the daemon which instructions files a turn would give the model now, and shows them. */
  async refreshInstructions(): Promise<void> {
    const c = this.ctl.ctxls;
    if (!c || !this.ctl.client?.isRunning()) return;
    const seq = ++this.instructionsSeq;
    try {
      const { context, instructions } = await c.context();
      if (seq !== this.instructionsSeq) return;
      const before = JSON.stringify(this.ctl.state.instructions ?? []);
      this.setInstructions(instructions, context?.files ?? []);
      if (JSON.stringify(this.ctl.state.instructions) !== before) this.ctl.view.postState();
    } catch {
      // The daemon stopped meanwhile: the chips stay as they were.
    }
  }

  /** An instructions file changed on the disk: looked up again once the changes settle. */
  instructionsChanged(): void {
    if (this.instructionsTimer) clearTimeout(this.instructionsTimer);
    this.instructionsTimer = setTimeout(() => void this.refreshInstructions(), 200);
  }

  /** The chat view's +: a workspace file picked from a list goes into the session's context (files set, merged). */
  async addContextFile(): Promise<void> {
    const c = await this.ctl.daemon.need();
    if (!c) return;
    type Item = vscode.QuickPickItem & { uri: vscode.Uri };
    const items = (async (): Promise<Item[]> => {
      const out: Item[] = [];
      const seen = new Set<string>();
      const add = (uri: vscode.Uri, description?: string) => {
        if (seen.has(uri.toString()) || !this.ctl.syncable(uri)) return;
        seen.add(uri.toString());
        out.push({ label: vscode.workspace.asRelativePath(uri, false), description, uri });
      };
      for (const d of vscode.workspace.textDocuments) add(d.uri, "open");
      const files = await vscode.workspace.findFiles("**/*", "{**/node_modules/**,**/.git/**}", 5000);
      files.sort((a, b) => a.fsPath.localeCompare(b.fsPath)).forEach((f) => add(f));
      return out;
    })();
    const pick = await vscode.window.showQuickPick(items, {
      title: "Add a file to the ctxls session's context",
      placeHolder: "Its text goes with every question of the session, until you remove it (×)",
      matchOnDescription: true,
    });
    if (!pick) return;
    const r = await c.addFiles([pick.uri.fsPath]);
    for (const w of r.warnings ?? []) vscode.window.showWarningMessage(`ctxls: ${w}`);
    vscode.window.setStatusBarMessage(`ctxls: added ${baseName(pick.uri.fsPath)} to the context`, 4000);
  }

  /** The workspace's files for the list after "@" (ctxls.workspace.files); none while the daemon is not running. */
  async workspaceFiles(query: string): Promise<string[]> {
    const c = this.ctl.ctxls;
    if (!c || !this.ctl.client?.isRunning()) return [];
    const r = await c.command("ctxls.workspace.files", { query, limit: mentionLimit });
    return (r.files ?? []).map((f) => f.path).filter(mentionable);
  }

  /** The editor's view (ctxls/didChangeView), sent once the editor rests. */
  viewChanged(editor: vscode.TextEditor | undefined): void {
    if (!editor || !this.ctl.syncable(editor.document.uri)) return;
    this.lastEditor = editor;
    if (this.viewTimer) clearTimeout(this.viewTimer);
    this.viewTimer = setTimeout(() => {
      const c = this.ctl.ctxls;
      if (!c || !this.ctl.client?.isRunning() || editor.document.isClosed) return;
      const r = (x: vscode.Range) => ({ start: { line: x.start.line, character: x.start.character }, end: { line: x.end.line, character: x.end.character } });
      const vis = editor.visibleRanges[0];
      c.didChangeView({ textDocument: { uri: editor.document.uri.toString() }, selection: r(editor.selection), ...(vis ? { visibleRange: r(vis) } : {}) });
    }, 300);
  }

  /** The text editor the user last worked in, even when the chat view has focus. */
  currentEditor(): vscode.TextEditor | undefined {
    const a = vscode.window.activeTextEditor;
    if (a && this.ctl.syncable(a.document.uri)) return a;
    const l = this.lastEditor;
    if (l && !l.document.isClosed) {
      // The same document in a visible editor keeps its live selection.
      return vscode.window.visibleTextEditors.find((e) => e.document === l.document) ?? l;
    }
    return undefined;
  }

  /** The context's commands: add and remove files, show the context, copy a file into the session folder. */
  register(reg: Reg, withClient: WithClient): void {
    withClient("ctxls.ui.addCurrentFile", async (c) => {
      const editor = this.currentEditor();
      if (!editor) {
        vscode.window.showInformationMessage("ctxls: open a file in the editor first; Add Current File to Context adds the file you last worked in.");
        return;
      }
      const p = editor.document.uri.fsPath;
      const r = await c.addFiles([p]);
      for (const w of r.warnings ?? []) vscode.window.showWarningMessage(`ctxls: ${w}`);
      vscode.window.setStatusBarMessage(`ctxls: added ${baseName(p)} to the context`, 4000);
      await this.ctl.view.reveal(false);
    });
    withClient("ctxls.ui.removeFile", async (c) => {
      const { context } = await c.context();
      const files = context?.files ?? [];
      if (files.length === 0) {
        vscode.window.showInformationMessage("ctxls: the context has no files to remove.");
        return;
      }
      const pick = await vscode.window.showQuickPick(
        files.map((f) => ({ label: baseName(f), description: vscode.workspace.asRelativePath(f), path: f })),
        { placeHolder: "Remove a file from the context" },
      );
      if (!pick) return;
      await c.dropFile(pick.path);
      vscode.window.showInformationMessage(`ctxls: removed ${pick.label} from the context.`);
    });
    withClient("ctxls.ui.showContext", async (c) => {
      const { context, instructions } = await c.context();
      this.ctl.state.context = contextSets(context ?? {});
      this.setInstructions(instructions, context?.files);
      this.ctl.state.sessionFiles = await this.sessionFiles();
      this.ctl.state.revealContext = Date.now();
      await this.ctl.view.reveal(false);
      this.ctl.view.postState();
    });
    withClient("ctxls.ui.addFileToSession", async (c, arg?: vscode.Uri) => {
      const uris = arg instanceof vscode.Uri ? [arg] : await vscode.window.showOpenDialog({ canSelectMany: true, openLabel: "Add to Session" });
      if (!uris?.length) return;
      const added: string[] = [];
      for (const u of uris) {
        const r = await c.addToSession(u.fsPath);
        added.push(`${r.name} (${r.size} bytes)`);
      }
      if (!this.ctl.state.sessionId) await this.ctl.sessions.adoptSession();
      this.ctl.state.sessionFiles = await this.sessionFiles();
      this.ctl.view.postState();
      vscode.window.showInformationMessage(`ctxls: copied ${added.join(", ")} into the session's sources/ folder.`);
    });
    // The context menus' entries (their titles name ctxls; the palette has the commands above).
    reg("ctxls.ui.menu.addFileToSession", async (arg?: vscode.Uri) => vscode.commands.executeCommand("ctxls.ui.addFileToSession", arg));
    reg("ctxls.ui.menu.addCurrentFile", async (arg?: vscode.Uri) => vscode.commands.executeCommand("ctxls.ui.addCurrentFile", arg));
  }
}
