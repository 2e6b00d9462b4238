// The VS Code extension: starts `ctxls serve` with vscode-languageclient and
// wires the chat view (a webview view in ctxls's sidebar container), the
// command palette and the status bar to the protocol layer in protocol.ts.
//
// The commands are registered before the daemon starts, so a missing or
// wrong ctxls.path gives every command the same message with a button that
// opens the setting; fixing the setting starts the daemon without a reload.
//
// This file only wires: the Controller holds what the features share (the
// daemon's client, the view's state, the chat view) and hands the editor's
// events, the daemon's messages and the view's messages to the feature they
// are about, each in a module of its own: lifecycle.ts (the daemon),
// sessions.ts, context.ts, chat.ts, questions.ts, edits.ts, model.ts,
// links.ts.
import * as vscode from "vscode";
import { CancellationToken, LanguageClient } from "vscode-languageclient/node";
import { apiKeySecret } from "./apikey";
import { Chat } from "./chat";
import { ChatView, FromView } from "./chatview";
import { ContextFiles, watchInstructions } from "./context";
import { createdUris } from "./created";
import { errorText } from "./daemon";
import { answerDiagnostics } from "./diagnostics";
import { Edits } from "./edits";
import { appletFile, EditorViewCard } from "./editorview";
import { InputHistory } from "./history";
import { Lifecycle } from "./lifecycle";
import { Links } from "./links";
import { ModelStatus } from "./model";
import { PreviewDocs } from "./preview";
import { CtxlsClient, ErrorKinds, errorKind, Session } from "./protocol";
import { MessageRequest, Questions } from "./questions";
import { Sessions } from "./sessions";
import { editorFolders, isUserFile } from "./sync";
import { emptyState, ViewState } from "./viewstate";

/** Registers a command: its failure is said as ctxls's (a missing provider by the one message for it). */
export type Reg = (id: string, f: (...args: any[]) => Promise<unknown>) => unknown;
/** Registers a command that needs the running daemon (said to the user when it is not running). */
export type WithClient = (id: string, f: (c: CtxlsClient, ...args: any[]) => Promise<unknown>) => unknown;

export class Controller {
  /** The running daemon's language client and the ctxls protocol over it (lifecycle.ts starts and stops them). */
  client?: LanguageClient;
  ctxls?: CtxlsClient;
  /** What the chat view draws. */
  state: ViewState = emptyState();
  /** The session shown, as the daemon last said it. */
  session?: Session;
  readonly view: ChatView;
  /** The editor view card goes when its file's last tab closes (editorview.ts). */
  readonly editorView: EditorViewCard;
  private readonly folders: string[];

  readonly daemon: Lifecycle;
  readonly model: ModelStatus;
  readonly sessions: Sessions;
  readonly context: ContextFiles;
  readonly chat: Chat;
  readonly questions: Questions;
  readonly edits: Edits;
  readonly links: Links;

  constructor(readonly ext: vscode.ExtensionContext) {
    this.folders = editorFolders(ext.globalStorageUri.fsPath, ext.logUri.fsPath, ext.extensionUri.fsPath);
    this.daemon = new Lifecycle(this);
    this.model = new ModelStatus(this);
    this.sessions = new Sessions(this);
    this.context = new ContextFiles(this);
    this.chat = new Chat(this);
    this.questions = new Questions(this);
    this.edits = new Edits(this);
    this.links = new Links(this);
    this.editorView = new EditorViewCard(
      () => appletFile(this.state.context),
      () => void this.ctxls?.dropItem("applet", "*").catch(() => undefined),
    );
    this.view = new ChatView(ext.extensionUri, () => this.state, (m) => this.fromView(m), new InputHistory(ext.workspaceState), (q) => this.context.workspaceFiles(q));
    ext.subscriptions.push(
      this.model.status,
      this.model.modelStatus,
      this.edits.reviews,
      this.edits.created,
      this.editorView,
      vscode.window.registerWebviewViewProvider(ChatView.id, this.view, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.workspace.registerTextDocumentContentProvider(PreviewDocs.scheme, this.chat.previews),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        this.context.viewChanged(e);
        // Another text editor: a removed chip comes back for the new file (not for a prompt preview, which keeps the chip as it was).
        if (e && e.document.uri.scheme !== PreviewDocs.scheme && e.document.uri.toString() !== this.context.removedDoc) this.context.removedDoc = undefined;
        this.context.turnFileChanged();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.context.turnFileChanged()),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        this.context.viewChanged(e.textEditor);
        this.context.turnFileChanged();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // (ctxls.path is an application setting: a workspace's value is not read, and changes nothing.)
        if (e.affectsConfiguration("ctxls.path") && (vscode.workspace.getConfiguration("ctxls").get<string>("path") ?? "") !== this.daemon.pathInUse) void this.daemon.restart();
        if (e.affectsConfiguration("ctxls.sendActiveFile")) this.context.turnFileChanged(0);
        if (e.affectsConfiguration("ctxls")) this.daemon.sendSettings();
        if (e.affectsConfiguration("ctxls.provider")) {
          // The model new sessions get may be another now (none, with the model setting cleared).
          if (this.ctxls && this.client?.isRunning()) void this.model.learnDefaultModel(this.ctxls);
          // The stored key goes under the variable the provider's settings name (apikey.ts).
          void this.daemon.applyKey();
        }
        // (After the settings: the daemon reads them before the look.)
        if (e.affectsConfiguration("ctxls.projectInstructions")) void this.context.refreshInstructions();
      }),
      // An instructions file created, saved or deleted: the chips say so
      // (the daemon reads the files afresh at each look and each turn).
      ...watchInstructions(() => this.context.instructionsChanged()),
      // Trusted now: the workspace's restricted settings (its MCP servers, provider.baseURL, …) count.
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.daemon.sendSettings()),
      // Set API Key here or in another window: the daemon gets the key.
      ext.secrets.onDidChange((e) => e.key === apiKeySecret && void this.daemon.applyKey()),
    );
    const e = vscode.window.activeTextEditor;
    if (e && this.syncable(e.document.uri)) this.context.lastEditor = e;
    this.state.turnFile = this.context.turnFile();
    this.model.updateStatus();
    this.model.status.show();
  }

  /** Whether the file is the user's (the daemon hears of it), not one of the editor's own (sync.ts). */
  syncable(uri: vscode.Uri): boolean {
    return isUserFile(uri, this.folders);
  }

  /**
   * What the daemon sends and asks, each to the feature it is about:
   * registered on each new client before it starts (Lifecycle.doStart).
   */
  listen(client: LanguageClient, ctxls: CtxlsClient): void {
    ctxls.onSessionUpdated((p) => this.sessions.sessionUpdated(p));
    ctxls.onContextChanged((p) => this.context.contextChanged(p));
    ctxls.onSessionFilesChanged((p) => this.context.sessionFileChanged(p));
    ctxls.onToolCall((p) => this.chat.toolCall(p));
    // The daemon's questions (initializationOptions.questions): on the
    // call's card in the chat, or a card of their own, never as a
    // notification with buttons, and without taking the keyboard.
    ctxls.onQuestion((p) => this.questions.questionAsked(ctxls, p));
    ctxls.onQuestionClosed((p) => this.questions.questionClosed(p));
    // A daemon that does not know initializationOptions.questions asks
    // with window/showMessageRequest before an MCP tool runs: the question is shown as a
    // notification, as every LSP client shows it, and on the call's card,
    // where it is answered too (the 15-second toast may have gone to the
    // notification centre). The first answer wins; both answer with the
    // chosen action's title, no answer (a closed notification) is null.
    client.onRequest("window/showMessageRequest", (p: MessageRequest, token: CancellationToken) => this.questions.question(p, token));
    // The model's edits, applied as the language client applies them; a new
    // file it created is removed again if the user throws it away unsaved
    // (created.ts). (Registered before the start: it takes the place of the
    // client's own handler, which it calls.)
    client.onRequest("workspace/applyEdit", async (p: { edit?: { documentChanges?: unknown[] } }) => {
      const res: { applied: boolean } = await (client as unknown as { handleApplyWorkspaceEdit(p: unknown): Promise<{ applied: boolean }> }).handleApplyWorkspaceEdit(p);
      if (res.applied) this.edits.created.add(createdUris(p.edit));
      return res;
    });
    // The daemon's messages. Errors during a turn wait for its end: a turn
    // refused for want of a provider (kind noProvider) is said in the view
    // and by this extension's own notification, in VS Code's words, with
    // Open Settings; any other is shown then.
    this.daemon.notices.reset();
    client.onNotification("window/showMessage", (p: MessageRequest) => {
      if (p.type === 1 && this.chat.running) this.chat.turnMessages.push(p);
      else this.daemon.notices.show(p);
    });
    // The model's edits in the ask mode: a diff to accept or reject (see review.ts).
    ctxls.onReviewEdit((p, token) => this.edits.reviewEdit(p, token));
    // The model's diagnostics tool: the Problems panel's diagnostics (see diagnostics.ts).
    ctxls.onDiagnostics((p, token) => answerDiagnostics(p, token));
  }

  /** What the user did in the chat view, each to the feature it is about. */
  private fromView(m: FromView): void {
    const run = (f: () => Promise<unknown>) =>
      void f().catch((e) => {
        if (errorKind(e) === ErrorKinds.noProvider) this.daemon.showNoProvider();
        else void vscode.window.showErrorMessage(`ctxls: ${errorText(e)}`);
      });
    switch (m.type) {
      case "send":
        run(() => this.chat.ask(m.text, m.images?.length ? { images: m.images } : {}));
        break;
      case "rewind":
        run(() => this.chat.askAgain(m.index, m.text, m.images));
        break;
      case "stop":
        run(() => this.chat.cancel());
        break;
      case "openFile":
        run(() => this.links.openFile(m.path));
        break;
      case "openMatch":
        run(() => this.links.openMatch(m.path, m.line));
        break;
      case "openSessionFile":
        run(() => this.links.openSessionFile(m.subdir, m.name));
        break;
      case "openLink":
        run(() => this.links.openLink(m.href));
        break;
      case "removeTurnFile":
        this.context.removeTurnFile();
        break;
      case "restoreTurnFile":
        this.context.restoreTurnFile();
        break;
      case "addContextFile":
        run(() => this.context.addContextFile());
        break;
      case "preview":
        run(async () => {
          const c = await this.daemon.need();
          if (c) await this.chat.previewPrompt(c, { text: m.text, images: m.images });
        });
        break;
      case "removeContext":
        run(async () => {
          const c = await this.daemon.need();
          if (c) await c.dropItem(m.set, m.value);
        });
        break;
      case "removeSessionFile":
        run(() => this.context.removeSessionFile(m.name));
        break;
      case "copy":
        run(async () => {
          await vscode.env.clipboard.writeText(m.text);
          vscode.window.setStatusBarMessage("ctxls: code copied", 2000);
        });
        break;
      case "insertCode":
        run(() => this.edits.codeBlocks.insert(m.text));
        break;
      case "applyCode":
        run(() => this.edits.codeBlocks.apply(m.text, m.file));
        break;
      case "action":
        if (m.command === "openSetting") run(async () => this.daemon.openSetting());
        else if (m.command === "openProviderSettings") run(async () => this.daemon.openProviderSettings());
        else if (m.command === "setApiKey") run(async () => vscode.commands.executeCommand("ctxls.ui.setApiKey"));
        else if (m.command === "restartDaemon") run(async () => this.daemon.restart());
        else if (m.command === "setReviewMode") run(async () => vscode.commands.executeCommand("ctxls.ui.setReviewMode"));
        else if (m.command === "chooseModel") run(async () => vscode.commands.executeCommand("ctxls.ui.chooseModel"));
        break;
      case "undoTurn":
        run(() => this.edits.undoChanges(m.index));
        break;
      case "redoTurn":
        run(() => this.edits.redoChanges(m.index));
        break;
      case "toolAnswer":
        this.questions.answerOnCard(m.id, m.title);
        break;
      case "questionAnswer":
        this.questions.answerQuestionCard(m.id, m.title);
        break;
    }
  }

  /** Registers every command: each feature registers its own, through reg and withClient. */
  register(): void {
    const reg = (id: string, f: (...args: any[]) => Promise<unknown>) =>
      this.ext.subscriptions.push(
        vscode.commands.registerCommand(id, async (...args: any[]) => {
          try {
            await f(...args);
          } catch (e) {
            // No usable provider (Compact Session, Regenerate Title, …): the one message for it.
            if (errorKind(e) === ErrorKinds.noProvider) this.daemon.showNoProvider();
            else vscode.window.showErrorMessage(`ctxls: ${errorText(e)}`);
          }
        }),
      );
    const withClient = (id: string, f: (c: CtxlsClient, ...args: any[]) => Promise<unknown>) =>
      reg(id, async (...args) => {
        const c = await this.daemon.need();
        if (c) await f(c, ...args);
      });
    this.daemon.register(reg, withClient);
    this.chat.register(reg, withClient);
    this.sessions.register(reg, withClient);
    this.context.register(reg, withClient);
    this.edits.register(reg, withClient);
    this.model.register(reg, withClient);
  }
}

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller(context);
  controller.register();
  await controller.daemon.start();
}

export async function deactivate(): Promise<void> {
  await controller?.daemon.stop();
}
