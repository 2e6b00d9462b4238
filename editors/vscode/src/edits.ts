// The model's edits and the user's: reviewed in a diff in the ask mode
// (ctxls/reviewEdit, review.ts; a code block's Apply too, codeblocks.ts),
// the session's review mode, the new files it created (created.ts), and a
// turn's file changes undone and redone (ctxls.session.undo and redo), each
// said in a note under its turn.
import * as vscode from "vscode";
import { CodeBlocks } from "./codeblocks";
import { CreatedFiles } from "./created";
import { errorText } from "./daemon";
import type { Controller, Reg, WithClient } from "./extension";
import { baseName, CtxlsClient, ReviewEditParams, ReviewEditResult, ReviewMode } from "./protocol";
import { Decision, Reviews } from "./review";
import { OpenAsk, ReviewAnswers, reviewDecision, turnChangedFiles, TurnUndo, undoNote, ViewTurn } from "./viewstate";

/** The review modes as the Set Edit Review Mode picker offers them. */
const reviewModes: { mode: ReviewMode; label: string; detail: string }[] = [
  { mode: "ask", label: "Ask", detail: "Show each of the model's edits (and a code block's Apply) as a diff; it is applied to the editor only when you accept it." },
  { mode: "auto", label: "Auto", detail: "Apply the model's edits (and a code block's Apply) at once, to the editor (unsaved; Undo takes an edit back)." },
  { mode: "off", label: "Off", detail: "Offer the model no edit tools: it can only tell you what to change (a code block's Apply, your own click, still shows its diff first)." },
];

export class Edits {
  readonly reviews = new Reviews();
  /** The answers' code blocks put into the editor: Insert, and Apply through the review (codeblocks.ts). */
  readonly codeBlocks: CodeBlocks;
  readonly created = new CreatedFiles();
  /** What undo and redo did to turns, by their question's id: kept when the turns are read again (a session shown anew). */
  private undoByQuestion = new Map<number, TurnUndo>();

  constructor(private readonly ctl: Controller) {
    this.codeBlocks = new CodeBlocks(
      { currentEditor: () => this.ctl.context.currentEditor(), reviewMode: () => this.ctl.state.reviewMode, syncable: (uri) => this.ctl.syncable(uri) },
      this.reviews,
    );
  }

  /**
   * One of the model's edits to review (ctxls/reviewEdit): a diff editor
   * with Accept, Accept All and Reject, the same answers on the call's card
   * in the chat. The first answer wins; the daemon giving up (its timeout,
   * the turn cancelled) closes the diff.
   */
  reviewEdit(p: ReviewEditParams, token: { onCancellationRequested(l: () => void): unknown }): Promise<ReviewEditResult> {
    const name = baseName(p.path);
    const review = this.reviews.show({
      kind: "model",
      path: p.path,
      original: p.create ? undefined : vscode.Uri.parse(p.uri),
      proposed: p.newText,
      title: `${name}: proposed ${p.create ? "new file" : "edit"} (ctxls)`,
    });
    token.onCancellationRequested(() => review.answer("reject"));
    const r = this.ctl.chat.running;
    if (r) {
      const ask: OpenAsk = {
        actions: [ReviewAnswers.accept, ReviewAnswers.acceptAll, ReviewAnswers.reject],
        answer: (title) => review.answer(reviewDecision(title)),
      };
      r.answer.askFor(p.id, ask);
      r.redraw();
      void review.decision.then(() => {
        r.answer.settled(ask);
        r.redraw();
      });
    }
    return review.decision.then((decision) => ({ decision }));
  }

  /**
   * The view's turns get their stored question ids where they lack them (a
   * turn asked in this window has none until the session is shown again):
   * paired with the session's questions in order, while their texts agree.
   */
  private async learnQuestionIds(c: CtxlsClient): Promise<void> {
    if (this.ctl.state.turns.every((t) => t.questionId !== undefined)) return;
    const shown = await c.show(this.ctl.state.sessionId);
    const questions = (shown.messages ?? []).filter((m) => m.role === "user");
    this.ctl.state.turns.forEach((t, i) => {
      const q = questions[i];
      if (t.questionId === undefined && q && q.content === t.question) t.questionId = q.id;
    });
  }

  /**
   * Undo (ctxls.session.undo): with index, the file changes of that turn
   * and of every later one (from its question on); without, those of the
   * newest turn not undone yet. What came of it is a note under the turn,
   * not a notification; the turns undone offer Redo.
   */
  async undoChanges(index?: number): Promise<void> {
    const c = await this.ctl.daemon.need();
    if (!c) return;
    if (!this.ctl.state.sessionId) {
      this.undoFailed(index, "nothing to undo: this chat has no session yet");
      return;
    }
    const from = index === undefined ? undefined : this.ctl.state.turns[index]?.questionId ?? (await this.storedQuestionId(c, index));
    let r;
    try {
      r = await c.command("ctxls.session.undo", { sessionId: this.ctl.state.sessionId, ...(from !== undefined ? { from } : {}) });
    } catch (e) {
      this.undoFailed(index, errorText(e));
      return;
    }
    await this.learnQuestionIds(c).catch(() => undefined);
    // From a turn: it and every later turn that changed files had their changes taken back.
    if (from !== undefined) this.ctl.state.turns.forEach((t, i) => i > index! && turnChangedFiles(t) && this.setUndo(t, { undone: true }));
    let noted = from !== undefined ? index! : this.ctl.state.turns.findIndex((t) => t.questionId === r.turn);
    if (noted < 0) noted = this.ctl.state.turns.length - 1;
    const t = this.ctl.state.turns[noted];
    // A turn whose every file was left is not undone (nothing for Redo).
    if (t) this.setUndo(t, { undone: r.restored?.length ? true : (t.undo?.undone ?? false), note: undoNote(r, false) });
    this.ctl.view.postState();
  }

  /** Redo (ctxls.session.redo): the turn undone last gets its changes again; its note says what came of it. */
  async redoChanges(index?: number): Promise<void> {
    const c = await this.ctl.daemon.need();
    if (!c) return;
    let r;
    try {
      r = await c.command("ctxls.session.redo", this.ctl.state.sessionId ? { sessionId: this.ctl.state.sessionId } : {});
    } catch (e) {
      this.undoFailed(index, errorText(e));
      return;
    }
    await this.learnQuestionIds(c).catch(() => undefined);
    let i = this.ctl.state.turns.findIndex((t) => t.questionId === r.turn);
    if (i < 0) i = index ?? this.ctl.state.turns.length - 1;
    const t = this.ctl.state.turns[i];
    if (t) this.setUndo(t, { undone: false, note: undoNote(r, true) });
    this.ctl.view.postState();
  }

  /** Sets what undo or redo did to a turn, kept by its question's id. */
  private setUndo(t: ViewTurn, u: TurnUndo): void {
    t.undo = u;
    if (t.questionId !== undefined) this.undoByQuestion.set(t.questionId, u);
  }

  /** Turns read again get back what undo and redo did to them. */
  withUndo(turns: ViewTurn[]): ViewTurn[] {
    for (const t of turns) {
      const u = t.questionId !== undefined ? this.undoByQuestion.get(t.questionId) : undefined;
      if (u) t.undo = u;
    }
    return turns;
  }

  /** An undo or redo refused ("nothing to undo: …"): said under the turn it was asked on (the last, from the palette). */
  private undoFailed(index: number | undefined, text: string): void {
    const t = this.ctl.state.turns[index ?? this.ctl.state.turns.length - 1];
    if (!t) {
      void vscode.window.showInformationMessage(`ctxls: ${text}`);
      return;
    }
    this.setUndo(t, { undone: t.undo?.undone ?? false, note: text.charAt(0).toUpperCase() + text.slice(1), failed: true });
    this.ctl.view.postState();
  }

  /** The stored id of turn index's question (a turn asked in this window has none in the view yet). */
  async storedQuestionId(c: CtxlsClient, index: number): Promise<number | undefined> {
    const shown = await c.show(this.ctl.state.sessionId);
    const q = (shown.messages ?? []).filter((m) => m.role === "user")[index];
    return q && q.content === this.ctl.state.turns[index]?.question ? q.id : undefined;
  }

  /** The edits' commands: the review mode, a proposed edit accepted or rejected, undo and redo. */
  register(reg: Reg, withClient: WithClient): void {
    withClient("ctxls.ui.setReviewMode", async (c, arg?: unknown) => {
      let mode = reviewModes.find((m) => m.mode === arg)?.mode;
      if (!mode) {
        const pick = await vscode.window.showQuickPick(
          reviewModes.map((m) => ({ label: m.label, description: m.mode === this.ctl.state.reviewMode ? "current" : undefined, detail: m.detail, mode: m.mode })),
          { placeHolder: `How the model's edits are reviewed in this session (now: ${this.ctl.state.reviewMode})` },
        );
        if (!pick) return;
        mode = pick.mode;
      }
      const { session } = await c.setReviewMode(mode, this.ctl.state.sessionId);
      this.ctl.sessions.setSession(session);
      this.ctl.view.postState();
      vscode.window.setStatusBarMessage(`ctxls: edit review mode ${this.ctl.state.reviewMode}`, 4000);
    });
    const decide = (d: Decision) => async (arg?: unknown) => {
      if (!this.reviews.decide(arg, d)) vscode.window.showInformationMessage("ctxls: there is no proposed edit to review.");
    };
    reg("ctxls.ui.acceptEdit", decide("accept"));
    reg("ctxls.ui.acceptAllEdits", decide("acceptAll"));
    reg("ctxls.ui.rejectEdit", decide("reject"));
    reg("ctxls.ui.undo", async () => {
      await this.ctl.view.reveal(false);
      await this.undoChanges();
    });
    reg("ctxls.ui.redo", async () => {
      await this.ctl.view.reveal(false);
      await this.redoChanges();
    });
  }
}
