// Questions answered in the chat, never as a notification with buttons and
// never by taking the keyboard: the daemon's (ctxls/question: an MCP tool
// call's permission on its card, trust in a workspace's MCP servers on a
// card of its own; window/showMessageRequest from a daemon that does not
// know ctxls/question), counted on the view's badge; and the extension's own
// on a turn (asked again: also undo its changes?).
import * as vscode from "vscode";
import { CancellationToken } from "vscode-languageclient/node";
import { errorText } from "./daemon";
import type { Controller } from "./extension";
import { CtxlsClient, ErrorKinds, errorKind, QuestionClosedParams, QuestionParams } from "./protocol";
import { OpenAsk, questionOutcome, StreamingAnswer } from "./viewstate";

/** window/showMessageRequest's params and answer. */
export interface MessageRequest {
  type: number;
  message: string;
  actions?: { title: string }[];
}

/** Shows a question as a notification with its actions, as vscode-languageclient does by default. */
function showQuestion(p: MessageRequest): Thenable<{ title: string } | undefined> {
  const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return show(p.message, ...(p.actions ?? []));
}

export class Questions {
  /** The daemon's questions still open (ctxls/question), by id: shown on their cards, counted on the view's badge. */
  private questions = new Map<string, { ask: OpenAsk; answer: StreamingAnswer; redraw(): void; actions: QuestionParams["actions"] }>();
  /** The question open on a turn (asking again: also undo its changes?), answered on its card. */
  turnAsk?: { id: string; settle(title: string | undefined): void };
  private turnAskSeq = 0;

  constructor(private readonly ctl: Controller) {}

  /**
   * window/showMessageRequest (a daemon without ctxls/question): a
   * notification, and during a turn the call's card too; the first answer wins.
   */
  question(p: MessageRequest, token: CancellationToken): Promise<{ title: string } | null> {
    const r = this.ctl.chat.running;
    if (!r || !p.actions?.length) return Promise.resolve(showQuestion(p)).then((a) => a ?? null);
    return new Promise((resolve) => {
      let done = false;
      const ask: OpenAsk = {
        actions: p.actions!.map((a) => a.title),
        answer: (title) => {
          if (done) return;
          done = true;
          r.answer.settled(ask);
          r.redraw();
          resolve(title ? { title } : null);
        },
      };
      token.onCancellationRequested(() => ask.answer(undefined));
      r.answer.ask(ask);
      r.redraw();
      void showQuestion(p).then((a) => ask.answer(a?.title));
    });
  }

  /**
   * A ctxls/question: shown on its tool call's card (a permission), or on a
   * card of its own after the turn's parts so far (a trust question). The
   * view is not revealed or focused (typing in an editor must not answer
   * it); its badge counts the open questions, and a view that is not shown
   * gets a plain notice, without buttons.
   */
  questionAsked(c: CtxlsClient, p: QuestionParams): void {
    const r = this.ctl.chat.running;
    // Answers not marked deliberate first, in the daemon's order; "Always" last.
    const ordered = [...p.actions.filter((a) => !a.deliberate), ...p.actions.filter((a) => a.deliberate)];
    const ask: OpenAsk = {
      id: p.id,
      message: p.message,
      actions: ordered.map((a) => a.title),
      deliberate: ordered.filter((a) => a.deliberate).map((a) => a.title),
      // The daemon decides: the card keeps the question until ctxls/questionClosed.
      answer: (title) => {
        const action = p.actions.find((a) => a.title === title);
        if (!action || ask.outcome !== undefined) return;
        c.answerQuestion(p.id, action.id).then(undefined, (e) => {
          // Closed meanwhile (its time ran out, the turn ended): ctxls/questionClosed says so.
          if (errorKind(e) !== ErrorKinds.notFound) vscode.window.showErrorMessage(`ctxls: the answer was not taken: ${errorText(e)}`);
        });
      },
    };
    if (!r || (p.sessionId && this.ctl.state.sessionId && p.sessionId !== this.ctl.state.sessionId)) {
      // Nowhere to show it (no turn of this chat is running): said, without buttons.
      void vscode.window.showInformationMessage(`${p.message} (ctxls asked outside this window's chat; it is declined when its time runs out.)`);
      return;
    }
    if (p.toolCallId) r.answer.askFor(p.toolCallId, ask);
    else r.answer.askAlone(ask);
    this.questions.set(p.id, { ask, answer: r.answer, redraw: r.turnRedraw, actions: p.actions });
    r.redraw();
    this.updateBadge();
    if (!this.ctl.view.visible) void vscode.window.showInformationMessage(`${p.message} Answer it in the ctxls chat.`);
  }

  /** A ctxls/questionClosed: the question's answers go (on every card showing it), its card says what came of it. */
  questionClosed(p: QuestionClosedParams): void {
    const q = this.questions.get(p.id);
    if (!q) return;
    this.questions.delete(p.id);
    q.answer.closed(q.ask, questionOutcome(p.outcome, q.actions));
    q.redraw();
    this.updateBadge();
  }

  /** The daemon stopped or is restarted: its questions will not be closed; their cards say so. */
  dropQuestions(): void {
    for (const q of this.questions.values()) {
      q.answer.closed(q.ask, "not answered: the daemon stopped");
      q.redraw();
    }
    this.questions.clear();
    this.updateBadge();
  }

  /** The view's badge: how many questions wait for an answer. */
  private updateBadge(): void {
    this.ctl.view.setBadge(this.questions.size);
  }

  /** An answer given on a question's own card (a trust question). */
  answerQuestionCard(id: string, title: string): void {
    if (this.turnAsk?.id === id) {
      this.turnAsk.settle(title);
      return;
    }
    const ask = this.ctl.chat.running?.answer.askById(id) ?? this.questions.get(id)?.ask;
    if (ask && ask.outcome === undefined && ask.actions.includes(title)) ask.answer(title);
  }

  /** An answer given on a tool call's card. */
  answerOnCard(id: string, title: string): void {
    const ask = this.ctl.chat.running?.answer.askOf(id);
    if (ask?.actions.includes(title)) ask.answer(title);
  }

  /**
   * A question on turn index, in the chat (not a modal): its answers are
   * buttons on a card under the turn. Resolves with the answer's title, or
   * undefined when another question replaced it or a question was sent.
   */
  askOnTurn(index: number, message: string, actions: string[]): Promise<string | undefined> {
    this.turnAsk?.settle(undefined);
    const turn = this.ctl.state.turns[index];
    const id = `turn-ask-${++this.turnAskSeq}`;
    return new Promise((resolve) => {
      this.turnAsk = {
        id,
        settle: (title) => {
          if (this.turnAsk?.id !== id) return;
          this.turnAsk = undefined;
          turn.undoAsk = undefined;
          this.ctl.view.postState();
          resolve(title);
        },
      };
      turn.undoAsk = { id, message, actions };
      this.ctl.view.postState();
    });
  }
}
