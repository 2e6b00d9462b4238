// The chat view: a webview view in ctxls's own sidebar container. The page is
// static (the scripts and stylesheets in media/) under a strict
// Content-Security-Policy: nothing but its scripts, each allowed by a fresh
// nonce, and the extension's stylesheets. The extension sends it the state to
// draw; the page posts back what the user did.
import * as crypto from "node:crypto";
import * as vscode from "vscode";
import { InputHistory } from "./history";
import { TurnFileChip, ViewState, ViewTurn } from "./viewstate";

/** Messages the page posts. */
export type FromView =
  | { type: "ready" }
  /** images: pasted images as data URLs, sent with the question. */
  | { type: "send"; text: string; images?: string[] }
  /** Retry, Regenerate or Edit on turn index: its question asked again (text: the edited question), in place of it and what followed. */
  | { type: "rewind"; index: number; text?: string; images?: string[] }
  | { type: "stop" }
  /** A turn's "Undo changes": the file changes of that turn and the later ones undone (ctxls.session.undo from its question). */
  | { type: "undoTurn"; index: number }
  /** A turn's "Redo": the changes undone last applied again (ctxls.session.redo). */
  | { type: "redoTurn"; index: number }
  | { type: "openLink"; href: string }
  | { type: "openFile"; path: string }
  /** A line of a search's results on its card: its file (as the result names it, relative to the workspace) at line (1-based; none: the top). */
  | { type: "openMatch"; path: string; line?: number }
  | { type: "openSessionFile"; subdir: string; name: string }
  | { type: "removeContext"; set: string; value: string }
  /** The × of a file in the session-files card: the copy in the session folder's sources/ is deleted. */
  | { type: "removeSessionFile"; name: string }
  /** The × of the chip above the input: the next question goes without the active file. */
  | { type: "removeTurnFile" }
  /** A click on the removed (dashed) chip: the file goes with the question again. */
  | { type: "restoreTurnFile" }
  /** The + above the input: pick a workspace file to add to the session's context. */
  | { type: "addContextFile" }
  | { type: "copy"; text: string }
  /** A code block's Insert: at the cursor of the editor the user last worked in. */
  | { type: "insertCode"; text: string }
  /** A code block's Apply: in place of the selection, else at the cursor, or a file's whole text (file: the one its fence names); see codeblocks.ts. */
  | { type: "applyCode"; text: string; file?: string }
  /** The Preview button under the input: the prompt the draft would send (text; images: how many pasted images go too). */
  | { type: "preview"; text: string; images: number }
  /** The input's draft, asked for by draft() (seq: answered with it). */
  | { type: "draft"; seq: number; text: string; images: number }
  | { type: "action"; command: string }
  /** The permission question on a tool call's card, answered with one of its actions. */
  | { type: "toolAnswer"; id: string; title: string }
  /** A question on a card of its own (a trust question; id: the question's), answered with one of its actions. */
  | { type: "questionAnswer"; id: string; title: string }
  /** The text after an "@" in the input: the workspace's files matching it are asked for (seq: answered with it). */
  | { type: "mentionQuery"; query: string; seq: number };

/** The chat input's draft: its text and how many pasted images wait in it. */
export interface Draft {
  text: string;
  images: number;
}

/** The page's stylesheets, linked in this order (the cascade's). */
const styles = ["chat.css", "markdown.css", "cards.css", "mentions.css"];

/**
 * The page's scripts, run in this order: each defines what the later ones
 * use (window.ctxlsHistory, ctxlsMentions, ctxlsDom, ctxlsContext,
 * ctxlsCards, ctxlsTurns); chat.js, last, draws the page and wires its events.
 */
const scripts = ["history.js", "mentions.js", "dom.js", "context.js", "cards.js", "turns.js", "chat.js"];

export class ChatView implements vscode.WebviewViewProvider {
  static readonly id = "ctxls.chatView";
  private view?: vscode.WebviewView;
  private badgeCount = 0;
  /** draft()'s questions to the page, by their seq. */
  private drafts = new Map<number, (d: Draft | undefined) => void>();
  private draftSeq = 0;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly state: () => ViewState,
    private readonly onMessage: (m: FromView) => void,
    /** The questions sent from the view, for Up and Down in its input (history.ts). */
    private readonly history: InputHistory,
    /** The workspace's files matching a query, for the list after "@" (mentions.ts). */
    private readonly workspaceFiles: (query: string) => Promise<string[]>,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    view.webview.onDidReceiveMessage((m: FromView) => {
      if (m.type === "ready") {
        this.postState();
        view.webview.postMessage({ type: "history", entries: this.history.list() });
      }
      // A question sent from the input (an edited one too) joins the input's history.
      if (m.type === "send" || (m.type === "rewind" && m.text !== undefined)) void this.history.add(m.text ?? "");
      if (m.type === "draft") {
        this.drafts.get(m.seq)?.({ text: String(m.text ?? ""), images: Number(m.images) || 0 });
        return;
      }
      if (m.type === "mentionQuery") {
        // No daemon, or one that does not know the command: an empty list says no file matches.
        const answer = (files: string[]) => view.webview.postMessage({ type: "mentionResults", seq: m.seq, files });
        this.workspaceFiles(String(m.query ?? "")).then(answer, () => answer([]));
        return;
      }
      this.onMessage(m);
    });
    view.onDidDispose(() => (this.view = undefined));
    this.setBadge(this.badgeCount);
    view.onDidChangeVisibility(() => view.visible && this.postState());
  }

  /**
   * What the chat's input holds now (the draft a question would send);
   * undefined when the view was never shown, or its page does not answer
   * within a second (it is being reloaded).
   */
  draft(): Promise<Draft | undefined> {
    const view = this.view;
    if (!view) return Promise.resolve(undefined);
    const seq = ++this.draftSeq;
    return new Promise((resolve) => {
      const done = (d: Draft | undefined) => {
        if (!this.drafts.delete(seq)) return;
        clearTimeout(timer);
        resolve(d);
      };
      const timer = setTimeout(() => done(undefined), 1000);
      this.drafts.set(seq, done);
      view.webview.postMessage({ type: "draftRequest", seq }).then(
        (ok) => ok || done(undefined),
        () => done(undefined),
      );
    });
  }

  get visible(): boolean {
    return !!this.view?.visible;
  }

  /** Shows the view; with focus, the input gets the keyboard. */
  async reveal(focusInput: boolean): Promise<void> {
    if (this.view) {
      this.view.show(!focusInput);
    } else {
      await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    }
    if (focusInput) this.view?.webview.postMessage({ type: "focusInput" });
  }

  /** The view's badge (on its activity bar icon): n questions waiting for an answer; none at 0. */
  setBadge(n: number): void {
    this.badgeCount = n;
    if (this.view) this.view.badge = n > 0 ? { value: n, tooltip: n === 1 ? "ctxls: a question waits for your answer" : `ctxls: ${n} questions wait for your answer` } : undefined;
  }

  postState(): void {
    const s = this.state();
    this.view?.webview.postMessage({ type: "state", state: s });
  }

  postTurn(index: number, turn: ViewTurn): void {
    this.view?.webview.postMessage({ type: "turn", index, turn });
  }

  postBusy(busy: boolean): void {
    this.view?.webview.postMessage({ type: "busy", busy });
  }

  /** The chip above the input (the file that goes with the next question) changed. */
  postTurnFile(file: TurnFileChip | undefined): void {
    this.view?.webview.postMessage({ type: "turnFile", file });
  }

  /** A question that failed before it was sent goes back into the input (unless the user typed another). */
  postRestoreInput(text: string): void {
    this.view?.webview.postMessage({ type: "restoreInput", text });
  }

  /** The session's model or usage changed (the header's line). */
  postSessionLine(model: string | undefined, usage: string | undefined): void {
    this.view?.webview.postMessage({ type: "sessionLine", model, usage });
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = crypto.randomBytes(18).toString("base64");
    const uri = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(media, name));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en"><head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
${styles.map((name) => `<link rel="stylesheet" href="${uri(name)}">`).join("\n")}
<title>ctxls</title>
</head><body>
<header><div class="head"><h1 id="title">ctxls</h1><button id="mode" class="mode" type="button" data-command="setReviewMode" hidden></button></div>
<div id="session-line" class="session-line"><button id="model" class="link model" type="button" data-command="chooseModel" title="The model of this session's turns. Click to choose another."></button><span id="usage" class="usage" title="Tokens this session's turns have cost, as the provider reported them"></span></div>
<div id="context" class="context" aria-label="Session context"></div></header>
<div id="banner" class="banner" role="alert" hidden></div>
<main id="log" aria-live="polite"></main>
<form id="composer">
<div id="attach" class="attach" aria-label="Sent with the question"><button id="add-file" class="add-file" type="button" title="Add a workspace file to the session's context" aria-label="Add a file to the context">+</button><span id="turn-file" class="turn-file"></span><span id="images" class="images"></span></div>
<div class="input-wrap"><div id="mentions" class="mentions" role="listbox" aria-label="Workspace files to mention" hidden></div>
<textarea id="input" rows="3" aria-label="Message" placeholder="Ask ctxls — Enter to send, Shift+Enter for a new line; @ mentions a file; paste an image to send it too"></textarea></div>
<div id="editing" class="editing-hint" hidden><span>Editing your question: Enter sends it in its place (its answer and any later turns are removed). Esc cancels.</span></div>
<div class="actions"><span id="hint" class="hint"></span>
<span class="buttons"><button id="preview" class="secondary" type="button" title="Preview the prompt: the exact input this question would give the model, with the files that go with it (nothing is sent)">Preview</button><button id="send" class="primary" type="submit">Send</button><button id="stop" class="secondary" type="button" hidden title="Stop the answer (Esc)">Stop</button></span></div>
</form>
${scripts.map((name) => `<script nonce="${nonce}" src="${uri(name)}"></script>`).join("\n")}
</body></html>`;
  }
}
