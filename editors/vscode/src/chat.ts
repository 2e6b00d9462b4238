// The chat's turns: a question sent (with its files and images) and its
// answer streamed into the view, a question asked again in its place
// (Retry, Regenerate, Edit), Stop; and the commands around a turn: Ask,
// Ask about Selection, Compact Session, Export Session, Preview Prompt.
import * as path from "node:path";
import * as vscode from "vscode";
import { daemonWordsHelp, noProviderMessage } from "./apikey";
import { Draft } from "./chatview";
import { keyEnv, provider, workspaceRoots } from "./config";
import { daemonGoneDuringTurn, errorText } from "./daemon";
import type { Controller, Reg, WithClient } from "./extension";
import { sentWith } from "./mentions";
import { PreviewDocs, previewMarkdown } from "./preview";
import { CtxlsClient, ErrorKinds, errorKind, ToolCallUpdate, TurnOutcome } from "./protocol";
import { MessageRequest } from "./questions";
import { rewindUndoQuestion, selectedLines, StreamingAnswer, turnFileChip, undoNote, usageLine, ViewTurn } from "./viewstate";

/** The answers to "Also undo the file changes of the turns taken back?", on the turn asked again. */
const UndoAnswers = { undo: "Undo changes", keep: "Keep changes" } as const;

export class Chat {
  /** The running turn's answer (its text and tool calls) and how to redraw it. */
  running?: { answer: StreamingAnswer; redraw(): void; turnRedraw(): void };
  /** The daemon's error messages during the running turn, shown when it ends (see Controller.listen). */
  turnMessages: MessageRequest[] = [];
  /** A tool call was just shown as a card: its one-line $/progress report is not repeated. */
  private toolLineFollows = false;
  /** Preview Prompt's documents. */
  readonly previews = new PreviewDocs();

  constructor(private readonly ctl: Controller) {}

  /** ctxls/toolCall: a tool call of the running turn, drawn as a card. */
  toolCall(p: ToolCallUpdate): void {
    const r = this.running;
    if (!r || (this.ctl.state.sessionId && p.sessionId !== this.ctl.state.sessionId)) return;
    r.answer.toolCall(p);
    this.toolLineFollows = true;
    r.redraw();
  }

  /**
   * A question sent: its turn drawn, its answer streamed in, then the
   * session as stored (opts: its files, the question it replaces, pasted
   * images, a note on changes undone before it).
   */
  async ask(message: string, opts: { files?: string[]; rewind?: number; images?: string[]; undoNote?: string } = {}): Promise<void> {
    // A question sent while one waits on a turn: that one goes unanswered.
    this.ctl.questions.turnAsk?.settle(undefined);
    if (!this.ctl.daemon.startError && this.ctl.client && !this.ctl.daemon.starting && !this.ctl.client.isRunning()) {
      // The daemon stopped (it crashed, or was killed): the question stays
      // in the input, to send once it runs again.
      this.ctl.view.postRestoreInput(message);
      await this.ctl.daemon.waitForDaemon();
      if (this.ctl.client?.isRunning()) vscode.window.showInformationMessage("ctxls: the daemon had stopped and is running again; your question is still in the chat's input: press Enter to send it.");
      else vscode.window.showErrorMessage("ctxls: the daemon stopped and could not be started again; your question is still in the chat's input. See the ctxls output channel.");
      return;
    }
    const c = await this.ctl.daemon.need();
    if (!c) {
      this.ctl.view.postRestoreInput(message);
      return;
    }
    if (this.ctl.state.busy) {
      vscode.window.showInformationMessage("ctxls: a turn is running; wait for it or press Stop.");
      return;
    }
    await this.ctl.view.reveal(false);
    if (this.ctl.state.banner?.kind === "provider") {
      this.ctl.state.banner = undefined;
      this.ctl.view.postState();
    }
    // The chip's file (the active editor's, with its selected lines) goes with the question.
    const files = opts.files ?? this.ctl.context.turnFiles();
    this.ctl.state.highlight = undefined;
    const index = this.ctl.state.turns.length;
    const turn: ViewTurn = { question: message, parts: [], status: "streaming", files: [] };
    // Listed under the question: its file and the files it mentions (the daemon sends those too).
    const withFiles = sentWith(files, message, workspaceRoots(), (p) => vscode.workspace.asRelativePath(p));
    if (withFiles.length) turn.withFiles = withFiles;
    if (opts.undoNote) turn.undo = { undone: false, note: opts.undoNote };
    this.ctl.state.turns.push(turn);
    this.ctl.state.busy = true;
    this.ctl.view.postTurn(index, turn);
    this.ctl.view.postBusy(true);
    this.ctl.model.updateStatus();
    const answer = new StreamingAnswer();
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      turn.parts = answer.view();
      this.ctl.view.postTurn(index, turn);
    };
    // After the turn (a question closed late): only while this turn is still the one shown there.
    const turnRedraw = () => {
      if (this.ctl.state.turns[index] !== turn) return;
      if (this.running?.answer === answer) flush();
      else {
        turn.parts = answer.view();
        this.ctl.view.postTurn(index, turn);
      }
    };
    this.running = { answer, redraw: flush, turnRedraw };
    this.turnMessages = [];
    this.toolLineFollows = false;
    let out: TurnOutcome;
    try {
      out = await c.turn(
        message,
        {
          onDelta: (d) => {
            answer.delta(d);
            turn.activity = undefined;
            this.toolLineFollows = false;
            timer ??= setTimeout(flush, 40);
          },
          onUsage: (u) => {
            turn.usage = usageLine(u);
            this.ctl.view.postTurn(index, turn);
          },
          onActivity: (m) => {
            // A tool call's line: its card says it already.
            if (this.toolLineFollows) {
              this.toolLineFollows = false;
              return;
            }
            turn.activity = m;
            this.ctl.view.postTurn(index, turn);
          },
        },
        { ...(files.length ? { files } : {}), ...(opts.rewind !== undefined ? { rewind: opts.rewind } : {}), ...(opts.images?.length ? { images: opts.images } : {}) },
      );
    } finally {
      this.running = undefined;
      // Questions still open when the turn ends are settled as unanswered.
      for (const a of answer.openAsks()) a.answer(undefined);
    }
    if (timer) clearTimeout(timer);
    if (!answer.text() && out.text) answer.delta(out.text);
    turn.parts = answer.view();
    turn.activity = undefined;
    turn.status = { stop: "done", cancelled: "cancelled", length: "length", error: "error" }[out.finishReason] ?? "done";
    turn.error = out.error;
    if (out.disconnected) {
      // The daemon died while it answered (a crash, a kill): said in the
      // user's words, as the stored turn will say it ("interrupted"); what
      // came so far stays, and Retry asks again once it runs.
      turn.status = "interrupted";
      turn.error = daemonGoneDuringTurn;
    }
    if (out.finishReason === "error" && out.kind === ErrorKinds.noProvider) {
      // Nothing was sent or stored: the question leaves the log and goes
      // back into the input, to send again once a provider is set. The
      // banner and one notification say it in the same words (the
      // daemon's own notice of it is dropped above), with Set API Key and
      // Open Settings; the daemon's words follow in the banner when
      // something is set and wrong (a base URL without http://), not when
      // nothing is set at all, where they would list the variables again.
      this.ctl.state.turns.splice(index, 1);
      this.ctl.state.busy = false;
      const name = keyEnv();
      const detail = daemonWordsHelp(provider(), process.env, name, !!this.ctl.daemon.keyInUse?.key) ? `\n(${errorText(out.error)})` : "";
      this.ctl.state.banner = {
        text: `Not sent: ${noProviderMessage(name)} Your question is back in the input.${detail}`,
        actions: [
          { label: "Set API Key", command: "setApiKey" },
          { label: "Open Settings", command: "openProviderSettings" },
        ],
        kind: "provider",
      };
      this.ctl.view.postState();
      this.ctl.view.postBusy(false);
      this.ctl.view.postRestoreInput(message);
      this.ctl.model.updateStatus();
      this.ctl.daemon.showNoProvider();
      // A question asked again that never started removed nothing: show the session as it is.
      if (opts.rewind !== undefined) await this.ctl.sessions.loadSession(this.ctl.state.sessionId);
      return;
    }
    const messages = this.turnMessages;
    this.turnMessages = [];
    if (out.kind !== ErrorKinds.noProvider) for (const m of messages) this.ctl.daemon.notices.show(m);
    turn.usage = usageLine(out.usage) ?? turn.usage;
    this.ctl.state.busy = false;
    this.ctl.view.postTurn(index, turn);
    this.ctl.view.postBusy(false);
    // The instructions files the turn gave the model (its own files may have brought more).
    if (out.instructions) {
      const before = JSON.stringify(this.ctl.state.instructions ?? []);
      this.ctl.context.setInstructions(out.instructions);
      if (JSON.stringify(this.ctl.state.instructions) !== before) this.ctl.view.postState();
    }
    this.ctl.model.updateStatus();
    if (out.sessionId ? out.sessionId !== this.ctl.state.sessionId : !this.ctl.state.sessionId) await this.ctl.sessions.adoptSession(out.sessionId);
    if (this.ctl.sessions.compactedDuringTurn || opts.images?.length) {
      // A summary's marker, or the names the question's images got in the
      // session folder: shown as stored.
      this.ctl.sessions.compactedDuringTurn = false;
      await this.ctl.sessions.loadSession(this.ctl.state.sessionId);
    }
    await this.ctl.model.refreshUsage();
  }

  /**
   * Retry, Regenerate and Edit: turn index's question asked again (text, when
   * given, is the edited question) in place of it and of what followed it
   * (ctxls/chat with rewind: the daemon removes them from the session).
   */
  async askAgain(index: number, text?: string, images?: string[]): Promise<void> {
    const turn = this.ctl.state.turns[index];
    if (!turn) return;
    if (this.ctl.state.busy) {
      vscode.window.showInformationMessage("ctxls: a turn is running; wait for it or press Stop.");
      return;
    }
    const c = await this.ctl.daemon.need();
    if (!c || !this.ctl.state.sessionId) return;
    const id = turn.questionId ?? (await this.ctl.edits.storedQuestionId(c, index));
    if (id === undefined) {
      vscode.window.showErrorMessage("ctxls: this question is not stored in the session, so it cannot be asked again in its place; ask it as a new question.");
      return;
    }
    const later = this.ctl.state.turns.length - index - 1;
    if (later > 0) {
      const go = "Ask Again";
      const what = later === 1 ? "the turn after it" : `the ${later} turns after it`;
      const pick = await vscode.window.showWarningMessage(`ctxls: asking this question again removes its answer and ${what} from the session.`, { modal: true }, go);
      if (pick !== go) return;
    }
    // The turns taken back changed files: asked in the chat, on the turn, whether to undo those changes too.
    let undone: string | undefined;
    const undoQuestion = rewindUndoQuestion(this.ctl.state.turns.slice(index));
    if (undoQuestion) {
      const answer = await this.ctl.questions.askOnTurn(index, undoQuestion, [UndoAnswers.undo, UndoAnswers.keep]);
      // Not answered (another question sent, the session changed): nothing is asked again.
      if (answer === undefined || this.ctl.state.turns[index] !== turn || this.ctl.state.busy) return;
      if (answer === UndoAnswers.undo) {
        try {
          const r = await c.command("ctxls.session.undo", { sessionId: this.ctl.state.sessionId, from: id });
          undone = "Before this answer: " + undoNote(r, false).replace(/^Undid/, "undid");
        } catch (e) {
          undone = "Before this answer, the changes were not undone: " + errorText(e);
        }
      }
    }
    this.ctl.state.turns.splice(index);
    this.ctl.view.postState();
    await this.ask(text ?? turn.question, { rewind: id, ...(images?.length ? { images } : {}), ...(undone ? { undoNote: undone } : {}) });
  }

  /** Stop: the running turn is cancelled. */
  async cancel(): Promise<void> {
    if (!this.ctl.ctxls || !(await this.ctl.ctxls.cancel())) vscode.window.showInformationMessage("ctxls: nothing to cancel");
  }

  /**
   * Preview Prompt: the exact input the model would get for the chat's
   * draft, with the files its chips send (the editor's file unless its chip
   * was removed; the context's files), computed by the daemon; with no
   * draft, for a message asked for in an input box. Nothing is sent.
   */
  async previewPrompt(c: CtxlsClient, draft: Draft | undefined): Promise<void> {
    let message = draft?.text.trim() ? draft.text : undefined;
    if (!message) {
      message = await vscode.window.showInputBox({ prompt: "Preview the prompt for this message (nothing is sent)", placeHolder: "Your question" });
      if (!message) return;
    }
    const [p, { context }] = await Promise.all([c.preview(message, this.ctl.context.turnFiles()), c.context()]);
    const uri = this.previews.add(previewMarkdown(p, message, { contextFiles: context?.files ?? [], images: draft?.text.trim() ? draft.images : 0 }));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** The chat's commands: ask, ask about the selection, stop, compact, export, preview, focus. */
  register(reg: Reg, withClient: WithClient): void {
    withClient("ctxls.ui.ask", async () => {
      const f = this.ctl.context.turnFile();
      const what = f && !f.removed ? `${f.label} and the context's files go with it` : "the context's files go with it";
      const message = await vscode.window.showInputBox({ prompt: "Ask ctxls", placeHolder: `Your question (${what})` });
      if (message) await this.ask(message);
    });
    withClient("ctxls.ui.askSelection", async () => {
      const editor = this.ctl.context.currentEditor();
      if (!editor || editor.selection.isEmpty) {
        vscode.window.showInformationMessage("ctxls: select the lines to ask about in an editor first, then run Ask about Selection.");
        return;
      }
      // The selection is the chip above the chat's input (main.go:5-8): the
      // question typed there goes with the file and those lines.
      this.ctl.context.removedDoc = undefined;
      if (editor !== vscode.window.activeTextEditor) await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, selection: editor.selection, preserveFocus: false });
      this.ctl.state.turnFile = this.ctl.context.turnFile() ?? turnFileChip(editor.document.uri.fsPath, selectedLines(editor.selection.start, editor.selection.end));
      this.ctl.view.postTurnFile(this.ctl.state.turnFile);
      await this.ctl.view.reveal(true);
    });
    withClient("ctxls.ui.compactSession", async (c) => {
      if (!this.ctl.state.sessionId) {
        vscode.window.showInformationMessage("ctxls: there is no session to compact yet: ask something first.");
        return;
      }
      if (this.ctl.state.busy) {
        vscode.window.showInformationMessage("ctxls: a turn is running; compact the session when it has ended.");
        return;
      }
      let r;
      try {
        r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "ctxls: summarising the session's earlier turns for the model…" }, () => c.compact());
      } catch (e) {
        // Nothing to compact is an invalid argument: said, not an error.
        if (errorKind(e) !== ErrorKinds.invalidArgument) throw e;
        vscode.window.showInformationMessage("ctxls: " + errorText(e).replace(/^invalid argument:\s*/, ""));
        return;
      }
      await this.ctl.sessions.loadSession(this.ctl.state.sessionId);
      // Counted in questions, as people count a conversation.
      const n = r.summary.summaryOf?.questions ?? 0;
      vscode.window.showInformationMessage(`ctxls: ${n === 1 ? "the first question and its answer are" : `the first ${n} questions and their answers are`} summarised for the model; every message is kept.`);
    });
    withClient("ctxls.ui.exportSession", async (c) => {
      const { path: p } = await c.exportSession("markdown");
      // The export is written into the session's folder (in ctxls's data
      // folder): say where, and offer to open it or save a copy elsewhere.
      const pick = await vscode.window.showInformationMessage(`ctxls: exported the session to ${p}`, "Open", "Save a Copy As…");
      if (pick === "Open") await vscode.window.showTextDocument(vscode.Uri.file(p));
      else if (pick === "Save a Copy As…") {
        const root = vscode.workspace.workspaceFolders?.[0]?.uri;
        const to = await vscode.window.showSaveDialog({
          defaultUri: root ? vscode.Uri.joinPath(root, path.basename(p)) : undefined,
          filters: { Markdown: ["md"] },
          saveLabel: "Save Export",
        });
        if (!to) return;
        await vscode.workspace.fs.copy(vscode.Uri.file(p), to, { overwrite: true });
        await vscode.window.showTextDocument(to);
      }
    });
    withClient("ctxls.ui.previewPrompt", async (c) => this.previewPrompt(c, await this.ctl.view.draft()));
    reg("ctxls.ui.cancel", async () => this.cancel());
    reg("ctxls.ui.focusChat", async () => this.ctl.view.reveal(true));
  }
}
