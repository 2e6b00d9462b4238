// The chat's sessions: the one shown (its title, turns, context and files,
// as the daemon stores them; followed when a turn is asked elsewhere), and
// the commands that start, resume, search, rename, retitle and delete
// sessions, with their picker.
import * as vscode from "vscode";
import { workspaceRoots } from "./config";
import { errorText } from "./daemon";
import type { Controller, Reg, WithClient } from "./extension";
import { mentionedFiles, sentWith } from "./mentions";
import { CtxlsClient, Session, SessionUpdated, turnsFromMessages } from "./protocol";
import { contextSets, emptyState, sessionRow, ViewTurn, viewTurn } from "./viewstate";

/** The workspace state's key of the session shown (the daemon resumes it at its start). */
export const sessionKey = "ctxls.currentSession";

export class Sessions {
  /** A turn compacted the session: reload it when the turn ends. */
  compactedDuringTurn = false;
  /** Counts followElsewhere's looks: only the latest one's result is shown. */
  private followSeq = 0;

  constructor(private readonly ctl: Controller) {}

  /**
   * ctxls/sessionUpdated: the session's title; a compaction during a turn;
   * a turn asked elsewhere on the session shown.
   */
  sessionUpdated(p: SessionUpdated): void {
    if (this.ctl.state.sessionId && p.sessionId !== this.ctl.state.sessionId) return;
    if (!this.ctl.state.sessionId) void this.adoptSession(p.sessionId);
    // A turn compacted the session: the marker is placed from the stored
    // messages once the turn has ended (a command reloads by itself).
    if (p.compactedThrough && this.ctl.state.busy) this.compactedDuringTurn = true;
    this.ctl.state.title = p.title;
    if (this.ctl.session) this.ctl.session.title = p.title;
    this.ctl.model.updateStatus();
    this.ctl.view.postState();
    // A turn asked elsewhere (another editor or the CLI on the same
    // sessions, another daemon): the daemon says only that the session
    // changed; show its turns when they are not the ones shown.
    if (this.ctl.state.sessionId && p.sessionId === this.ctl.state.sessionId && !this.ctl.state.busy && !p.compactedThrough) void this.followElsewhere(p.sessionId);
  }

  /** The session shown: its title and review mode, remembered for the next start (sessionKey). */
  setSession(s: Session | undefined): void {
    this.ctl.session = s;
    this.ctl.state.sessionId = s?.id;
    this.ctl.state.title = s?.title ?? "New session";
    this.ctl.state.reviewMode = s?.meta?.reviewMode || "ask";
    void this.ctl.ext.workspaceState.update(sessionKey, s?.id);
    this.ctl.model.postSessionLine();
  }

  /**
   * Shows the session's stored turns when they differ from the ones shown
   * (a turn added, asked again or removed elsewhere): by their number and
   * the last one's question and status, so the session's own updates (its
   * title after a turn here) change nothing.
   */
  private async followElsewhere(id: string): Promise<void> {
    const c = this.ctl.ctxls;
    if (!c) return;
    // Changes come close together (a question stored, then its answer):
    // only the latest look's messages are shown, or an earlier look that
    // answered last would put back the turn without its answer.
    const seq = ++this.followSeq;
    try {
      const shown = await c.show(id);
      if (seq !== this.followSeq || this.ctl.state.busy || this.ctl.state.sessionId !== id || !shown?.session?.id) return;
      const stored = this.storedTurns(shown.messages ?? []);
      // The last turn's message ids change when its answer is stored (its
      // question and status do not).
      const sig = (ts: { question: string; status: string; ids?: number[] }[]) =>
        `${ts.length}\u0000${ts.at(-1)?.question ?? ""}\u0000${ts.at(-1)?.status ?? ""}\u0000${ts.at(-1)?.ids?.join(",") ?? ""}`;
      if (sig(stored) === sig(this.ctl.state.turns)) return;
      this.setSession(shown.session);
      this.ctl.state.turns = stored;
      this.ctl.view.postState();
      void this.ctl.model.refreshUsage();
    } catch {
      // The session may have been deleted meanwhile; the view keeps what it has.
    }
  }

  /** Learns the current session's title and folder without touching the turns shown. */
  async adoptSession(id?: string): Promise<void> {
    const c = this.ctl.ctxls;
    if (!c) return;
    try {
      const shown = await c.show(id);
      if (!shown?.session?.id) return;
      this.setSession(shown.session);
      this.ctl.state.sessionFiles = await this.ctl.context.sessionFiles();
      this.ctl.view.postState();
      void this.ctl.model.refreshUsage();
    } catch {
      // The session may have been deleted meanwhile; the view keeps what it has.
    }
  }

  /** Shows a session: its title, messages, context and files. */
  async loadSession(id?: string, highlight?: number): Promise<void> {
    const c = this.ctl.ctxls;
    if (!c) return;
    const shown = await c.show(id);
    if (!shown?.session?.id) return;
    this.setSession(shown.session);
    this.ctl.state.turns = this.storedTurns(shown.messages ?? []);
    const { context, instructions } = await c.context();
    this.ctl.state.context = contextSets(context ?? {});
    this.ctl.context.setInstructions(instructions, context?.files);
    this.ctl.state.sessionFiles = await this.ctl.context.sessionFiles();
    this.ctl.state.highlight = highlight;
    this.ctl.view.postState();
    void this.ctl.model.refreshUsage();
  }

  /** An empty view for a new session (the banner and the instructions chips stay). */
  private resetView(title = "New session"): void {
    const { banner, instructions } = this.ctl.state;
    this.ctl.state = emptyState(title);
    this.ctl.state.banner = banner;
    this.ctl.state.turnFile = this.ctl.context.turnFile();
    // The workspace's instructions stay while the new session's are looked up.
    this.ctl.state.instructions = instructions;
    void this.ctl.context.refreshInstructions();
  }

  /**
   * A session's stored messages as the view's turns: with what undo and redo
   * did to them, and the files that went with their questions (as the daemon
   * kept them; for a question stored before it did, the files it mentions).
   */
  private storedTurns(messages: Parameters<typeof turnsFromMessages>[0]): ViewTurn[] {
    const roots = workspaceRoots();
    const kept = new Map<number, string[]>();
    for (const m of messages) if (m.role === "user" && m.files?.length) kept.set(m.id, m.files);
    return this.ctl.edits.withUndo(turnsFromMessages(messages).map(viewTurn)).map((t) => {
      const files = t.questionId !== undefined ? kept.get(t.questionId) : undefined;
      const went = files ? sentWith(files, "", roots, (p) => vscode.workspace.asRelativePath(p)) : mentionedFiles(t.question, roots);
      return went.length ? { ...t, withFiles: went } : t;
    });
  }

  /** The sessions' commands: new, resume, search, rename, title, delete. */
  register(reg: Reg, withClient: WithClient): void {
    withClient("ctxls.ui.newSession", async (c) => {
      const { session } = await c.newSession();
      this.resetView();
      this.setSession(session);
      this.ctl.view.postState();
    });
    withClient("ctxls.ui.resumeSession", async (c) => {
      const pick = await this.pickSession(c, "resume");
      if (!pick) return;
      // Loaded here, with the hit: the resume notification only updates the context.
      this.ctl.state.sessionId = pick.id;
      await c.resume(pick.id);
      await this.loadSession(pick.id, pick.messageId);
      await this.ctl.view.reveal(false);
    });
    withClient("ctxls.ui.searchSessions", async (c) => {
      const pick = await this.pickSession(c, "search");
      if (!pick) return;
      // Loaded here, with the hit: the resume notification only updates the context.
      this.ctl.state.sessionId = pick.id;
      await c.resume(pick.id);
      await this.loadSession(pick.id, pick.messageId);
      await this.ctl.view.reveal(false);
    });
    withClient("ctxls.ui.renameSession", async (c) => {
      const t = await vscode.window.showInputBox({ prompt: "New session title", value: this.ctl.state.title });
      if (!t) return;
      const { session } = await c.rename(t);
      this.setSession(session);
      this.ctl.view.postState();
    });
    withClient("ctxls.ui.regenerateTitle", async (c) => {
      const { session } = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "ctxls: asking the model for a title" }, () => c.regenerateTitle());
      this.setSession(session);
      this.ctl.view.postState();
      vscode.window.showInformationMessage(`ctxls: the session is now called “${session.title}”.`);
    });
    withClient("ctxls.ui.clearTitle", async (c) => {
      const { session } = await c.clearTitle();
      this.setSession(session);
      this.ctl.view.postState();
      vscode.window.showInformationMessage(`ctxls: the title is automatic again: “${session.title}”.`);
    });
    withClient("ctxls.ui.deleteSession", async (c) => {
      const pick = await this.pickSession(c, "delete");
      if (!pick) return;
      if ((await vscode.window.showWarningMessage(`Delete the session “${pick.label}”? Its messages, context and folder are removed.`, { modal: true }, "Delete")) !== "Delete") return;
      await c.remove(pick.id);
      let switched = "";
      if (pick.id === this.ctl.state.sessionId) {
        // The most recent remaining session with a question in it, else a new one.
        const { sessions } = await c.list();
        const next = (sessions ?? []).find((s) => s.id !== pick.id && (s.questions ?? 0) > 0);
        this.resetView();
        if (next) {
          this.ctl.state.sessionId = next.id;
          await c.resume(next.id);
          await this.loadSession(next.id);
          switched = ` Now in “${next.title}”.`;
        } else {
          this.setSession(undefined);
          this.ctl.view.postState();
        }
      }
      vscode.window.showInformationMessage(`ctxls: deleted “${pick.label}”.${switched}`);
    });
  }

  /** A session picker; typing searches message text through the daemon (resume, search). */
  private pickSession(c: CtxlsClient, mode: "resume" | "search" | "delete"): Promise<{ id: string; label: string; messageId?: number } | undefined> {
    type Item = vscode.QuickPickItem & { id: string; messageId?: number };
    return new Promise(async (resolve) => {
      const qp = vscode.window.createQuickPick<Item>();
      qp.placeholder = {
        resume: "Resume a session: type to search titles and messages",
        search: "Search the messages of every session",
        delete: "Delete a session",
      }[mode];
      qp.matchOnDescription = true;
      qp.matchOnDetail = true;
      let base: Item[] = [];
      let seq = 0;
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const finish = (v: { id: string; label: string; messageId?: number } | undefined) => {
        if (done) return;
        done = true;
        resolve(v);
        qp.dispose();
      };
      qp.onDidAccept(() => {
        const it = qp.selectedItems[0] ?? qp.activeItems[0];
        if (it) finish({ id: it.id, label: it.label, messageId: it.messageId });
      });
      qp.onDidHide(() => finish(undefined));
      if (mode !== "delete") {
        qp.onDidChangeValue((v) => {
          if (timer) clearTimeout(timer);
          const my = ++seq;
          if (!v.trim()) {
            qp.items = mode === "search" ? [] : base;
            return;
          }
          timer = setTimeout(async () => {
            qp.busy = true;
            try {
              const { hits } = await c.search(v.trim());
              if (my !== seq) return;
              const hitItems: Item[] = (hits ?? []).map((h) => ({
                label: h.title,
                description: h.role === "user" ? "question" : h.role === "assistant" ? "answer" : h.role,
                detail: h.snippet.replace(/\s+/g, " "),
                id: h.sessionId,
                messageId: h.messageId,
                alwaysShow: true,
              }));
              const ids = new Set(hitItems.map((h) => h.id));
              qp.items = mode === "search" ? hitItems : [...hitItems, ...base.filter((b) => !ids.has(b.id))];
            } catch (e) {
              if (my === seq) vscode.window.showErrorMessage(`ctxls: search failed: ${errorText(e)}`);
            } finally {
              if (my === seq) qp.busy = false;
            }
          }, 200);
        });
      }
      qp.busy = true;
      qp.show();
      try {
        const { sessions } = await c.list();
        const now = new Date();
        base = (sessions ?? []).map((s) => ({ ...sessionRow(s, s.id === this.ctl.state.sessionId, now), id: s.id }));
        if (mode !== "search" && !qp.value.trim()) qp.items = base;
      } finally {
        qp.busy = false;
      }
    });
  }
}
