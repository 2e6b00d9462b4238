// The VS Code extension: starts `ctxls serve` with vscode-languageclient and
// wires the chat view (a webview view in ctxls's sidebar container), the
// command palette and the status bar to the protocol layer in protocol.ts.
//
// The commands are registered before the daemon starts, so a missing or
// wrong ctxls.path gives every command the same message with a button that
// opens the setting; fixing the setting starts the daemon without a reload.
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { CancellationToken, CloseAction, ErrorAction, LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions } from "vscode-languageclient/node";
import { apiKeySecret, daemonEnv, daemonWordsHelp, keyClearedMessage, keyEnvName, keyProblem, keySetMessage, noProviderMessage } from "./apikey";
import { ChatView, Draft, FromView } from "./chatview";
import { CodeBlocks } from "./codeblocks";
import { CreatedFiles, createdUris } from "./created";
import { daemonGoneDuringTurn, daemonGoneText, notCtxls, resolveBinary } from "./daemon";
import { answerDiagnostics } from "./diagnostics";
import { appletFile, EditorViewCard } from "./editorview";
import { InputHistory } from "./history";
import { mentionable, mentionedFiles, mentionLimit, sentWith } from "./mentions";
import { Notices } from "./notices";
import { mcpServersByOrigin, Servers } from "./settings";
import {
  baseName,
  ChatPreviewResult,
  Connection,
  CtxlsClient,
  disconnected,
  ErrorKinds,
  errorKind,
  InitializationOptions,
  InstructionFile,
  Provider,
  QuestionClosedParams,
  QuestionParams,
  ReviewEditParams,
  ReviewEditResult,
  ReviewMode,
  Session,
  SessionFilesChanged,
  Subfolders,
  turnsFromMessages,
  TurnOutcome,
} from "./protocol";
import { Decision, Reviews } from "./review";
import { resolveResultPath } from "./search";
import { editorFolders, isUserFile } from "./sync";
import {
  contextSets,
  emptyState,
  instructionChips,
  OpenAsk,
  questionOutcome,
  ReviewAnswers,
  reviewDecision,
  rewindUndoQuestion,
  selectedLines,
  SessionFile,
  sessionRow,
  StreamingAnswer,
  TurnFileChip,
  TurnUndo,
  turnChangedFiles,
  turnFileChip,
  undoNote,
  usageLine,
  ViewState,
  ViewTurn,
  viewTurn,
} from "./viewstate";

const sessionKey = "ctxls.currentSession";

const subdirs = Subfolders;

/** The settings' provider (ctxls.provider.*), as the daemon gets it. */
function provider(): Provider {
  const cfg = vscode.workspace.getConfiguration("ctxls.provider");
  const out: Provider = {};
  for (const key of ["api", "baseURL", "model", "apiKeyEnv", "titleModel"] as const) {
    const v = cfg.get<string>(key);
    if (v) out[key] = v;
  }
  return out;
}

/** The variable the daemon reads the provider's key from, with the settings as they are now (apikey.ts). */
function keyEnv(): string {
  return keyEnvName(provider(), process.env);
}

/**
 * The variable the key from SecretStorage goes in: the daemon's key
 * variable, unless a workspace's settings (a repository's) name it with
 * provider.apiKeyEnv: a repository does not choose which variable your key
 * lands in (GITHUB_TOKEN, say, which the daemon refuses as a provider key
 * but an MCP server's env may pass on). Undefined: the key is not given.
 */
function storedKeyEnv(): string | undefined {
  const v = vscode.workspace.getConfiguration("ctxls.provider").inspect<string>("apiKeyEnv");
  if (v?.workspaceFolderValue || v?.workspaceValue) return undefined;
  return keyEnv();
}

/** The daemon's own settings, when set (the daemon's defaults otherwise). */
function daemonSettings(): InitializationOptions {
  const cfg = vscode.workspace.getConfiguration("ctxls");
  const out: InitializationOptions = {};
  for (const key of ["viewIdleMs", "storageSoftLimitMB"] as const) {
    const v = cfg.inspect<number>(key);
    const set = v?.workspaceFolderValue ?? v?.workspaceValue ?? v?.globalValue;
    if (typeof set === "number" && set > 0) out[key] = set;
  }
  // "" leaves it to the daemon (80); "60", "60%" or "off" as the daemon reads them.
  const at = cfg.get<string>("compactAt")?.trim();
  if (at) out.compactAt = at;
  // The MCP servers whose tools the model may call (Claude Code's .mcp.json
  // format): the user's, and apart the workspace's, which the daemon uses
  // only once the user trusted them (settings.ts).
  const servers = mcpServers();
  if (servers.user) out.mcpServers = servers.user;
  if (servers.workspace) out.workspaceMcpServers = servers.workspace;
  if (cfg.get<boolean>("allowReadOnlyTools")) out.allowReadOnlyTools = true;
  if (cfg.get<boolean>("projectInstructions") === false) out.projectInstructions = false;
  const wait = cfg.get<number>("toolPermissionTimeoutSeconds");
  if (typeof wait === "number" && wait > 0) out.toolPermissionTimeoutSeconds = wait;
  return out;
}

/** ctxls.mcpServers by origin: the user's settings or the workspace's. */
function mcpServers(): { user?: Servers; workspace?: Servers } {
  return mcpServersByOrigin(vscode.workspace.getConfiguration("ctxls").inspect<Servers>("mcpServers"), vscode.workspace.isTrusted);
}

/**
 * workspace/didChangeConfiguration's settings.ctxls: the section as VS Code
 * has it, but the provider read key by key and the MCP servers by origin,
 * so the workspace's servers never arrive as the user's (the language
 * client's synchronize sends the merged section).
 */
function changedSettings(): Record<string, unknown> {
  const all = vscode.workspace.getConfiguration().get<Record<string, unknown>>("ctxls") ?? {};
  const servers = mcpServers();
  return { ...all, provider: provider(), mcpServers: servers.user ?? null, workspaceMcpServers: servers.workspace ?? null };
}

/**
 * Watches the workspace's instructions files (AGENTS.md in any folder,
 * CLAUDE.md, .github/copilot-instructions.md): created, saved or deleted.
 */
function watchInstructions(changed: () => void): vscode.Disposable[] {
  const w = vscode.workspace.createFileSystemWatcher("**/{AGENTS.md,CLAUDE.md,copilot-instructions.md}");
  return [w, w.onDidCreate(changed), w.onDidChange(changed), w.onDidDelete(changed)];
}

/** window/showMessageRequest's params and answer. */
interface MessageRequest {
  type: number;
  message: string;
  actions?: { title: string }[];
}

/** Shows a question as a notification with its actions, as vscode-languageclient does by default. */
function showQuestion(p: MessageRequest): Thenable<{ title: string } | undefined> {
  const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return show(p.message, ...(p.actions ?? []));
}

/** The workspace folders' paths. */
function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

function errorText(e: any): string {
  if (disconnected(e)) return daemonGoneText;
  return String(e?.message ?? e).replace(/^ctxls:\s*/, "");
}

/** Read-only documents for Preview Prompt (a content provider's documents cannot be edited). */
class PreviewDocs implements vscode.TextDocumentContentProvider {
  static readonly scheme = "ctxls-preview";
  private docs = new Map<string, string>();
  private seq = 0;
  add(text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PreviewDocs.scheme, path: `/Prompt preview ${++this.seq}.md` });
    this.docs.set(uri.toString(), text);
    return uri;
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? "";
  }
}

/** The answers to "Also undo the file changes of the turns taken back?", on the turn asked again. */
const UndoAnswers = { undo: "Undo changes", keep: "Keep changes" } as const;

/** The review modes as the Set Edit Review Mode picker offers them. */
const reviewModes: { mode: ReviewMode; label: string; detail: string }[] = [
  { mode: "ask", label: "Ask", detail: "Show each of the model's edits (and a code block's Apply) as a diff; it is applied to the editor only when you accept it." },
  { mode: "auto", label: "Auto", detail: "Apply the model's edits (and a code block's Apply) at once, to the editor (unsaved; Undo takes an edit back)." },
  { mode: "off", label: "Off", detail: "Offer the model no edit tools: it can only tell you what to change (a code block's Apply, your own click, still shows its diff first)." },
];

/** A file the daemon named (absolute, maybe with :N or :N-M) as the workspace names it: `app.ts:1-3`. */
function fileLabel(item: string): string {
  const m = /^(.*?)(:\d+(?:-\d+)?)?$/.exec(item)!;
  return `\`${vscode.workspace.asRelativePath(m[1])}${m[2] ?? ""}\``;
}

/**
 * The preview as Markdown: token counts and what goes with the question
 * (its own files, as the daemon named them; the context's files; pasted
 * images, which a preview does not hold), then each message and the tools.
 */
export function previewMarkdown(p: ChatPreviewResult, message: string, also: { contextFiles?: string[]; images?: number } = {}): string {
  const t = p.tokens;
  const lines = [
    `# Prompt preview: ${message.split("\n")[0]}`,
    "",
    `Model \`${p.model}\`. Tokens: system ${t.system}, history ${t.history}, files ${t.files}, total ${t.total} of a budget of ${p.budget}` +
      (p.dropped ? `; ${p.dropped} earlier messages not sent.` : "."),
    "Nothing was sent or stored.",
    "",
    p.files?.length ? `With this question: ${p.files.map(fileLabel).join(", ")}.` : "No file of its own goes with this question.",
  ];
  const ctx = also.contextFiles ?? [];
  if (ctx.length) lines.push(`The context's ${ctx.length === 1 ? "file goes" : "files go"} too: ${ctx.map(fileLabel).join(", ")}.`);
  const n = also.images ?? 0;
  if (n) lines.push(`${n === 1 ? "The pasted image goes" : `The ${n} pasted images go`} with it too (not shown here: an image is stored only when the question is sent).`);
  // The project's instructions files end the system message: named here,
  // their text is below in it.
  if (p.instructions?.length) {
    const named = p.instructions.map((f) => `\`${vscode.workspace.asRelativePath(f.path)}\` (${f.bytes.toLocaleString("en-US")} bytes${f.cut ? `; ${f.cut}` : ""})`);
    lines.push(`Project instructions, at the end of the system message: ${named.join(", ")}.`);
  }
  for (const m of p.messages) {
    lines.push("", `## ${m.role}${m.toolCallId ? ` (tool result ${m.toolCallId})` : ""}`, "", m.content);
    for (const c of m.toolCalls ?? []) lines.push("", `Tool call \`${c.name}\` ${c.arguments}`);
  }
  if (p.tools.length) {
    lines.push("", "## Tools offered", "");
    for (const tool of p.tools) lines.push(`- \`${tool.name}\`: ${tool.description}`);
  }
  return lines.join("\n") + "\n";
}

class Controller {
  private client?: LanguageClient;
  private ctxls?: CtxlsClient;
  private starting?: Promise<void>;
  private startError?: string;
  private state: ViewState = emptyState();
  private session?: Session;
  /** A turn compacted the session: reload it when the turn ends. */
  private compactedDuringTurn = false;
  /** Counts followElsewhere's looks: only the latest one's result is shown. */
  private followSeq = 0;
  /** The running turn's answer (its text and tool calls) and how to redraw it. */
  private running?: { answer: StreamingAnswer; redraw(): void; turnRedraw(): void };
  /** The question open on a turn (asking again: also undo its changes?), answered on its card. */
  private turnAsk?: { id: string; settle(title: string | undefined): void };
  private turnAskSeq = 0;
  /** What undo and redo did to turns, by their question's id: kept when the turns are read again (a session shown anew). */
  private undoByQuestion = new Map<number, TurnUndo>();
  /** The daemon's questions still open (ctxls/question), by id: shown on their cards, counted on the view's badge. */
  private questions = new Map<string, { ask: OpenAsk; answer: StreamingAnswer; redraw(): void; actions: QuestionParams["actions"] }>();
  /** The daemon's error messages during the running turn, shown when it ends (see doStart). */
  private turnMessages: MessageRequest[] = [];
  /** A tool call was just shown as a card: its one-line $/progress report is not repeated. */
  private toolLineFollows = false;
  private lastEditor?: vscode.TextEditor;
  private viewTimer?: NodeJS.Timeout;
  /** The document whose chip the user removed: its file stays out of questions until the active editor changes. */
  private removedDoc?: string;
  private turnFileTimer?: NodeJS.Timeout;
  /** The provider's default model, once ctxls.models.list has said it. */
  private defaultModel?: string;
  private readonly status: vscode.StatusBarItem;
  /** The session's model (click: Choose Model); its tooltip has the session's token usage. */
  private readonly modelStatus: vscode.StatusBarItem;
  private readonly view: ChatView;
  private readonly previews = new PreviewDocs();
  private readonly reviews = new Reviews();
  /** The answers' code blocks put into the editor: Insert, and Apply through the review (codeblocks.ts). */
  private readonly codeBlocks: CodeBlocks;
  private readonly created = new CreatedFiles();
  /** Counts the looks for the instructions files: only the latest one's answer is shown. */
  private instructionsSeq = 0;
  /** The context's files the instructions chips were last looked up for (a change may bring another folder's AGENTS.md). */
  private instructionsFor?: string;
  private instructionsTimer?: NodeJS.Timeout;
  /** The ctxls.path the running daemon was started with (a change of another scope's value restarts nothing). */
  private pathInUse?: string;
  private readonly folders: string[];
  /** The editor view card goes when its file's last tab closes (editorview.ts). */
  private readonly editorView: EditorViewCard;
  /** The daemon's notices: a warning once per daemon run, an MCP configuration's with a button to its file (notices.ts). */
  private readonly notices = new Notices();
  /**
   * The API key the running daemon was started with (from SecretStorage,
   * undefined: none) and the variable it went in: a key set, changed or
   * cleared, or another variable for it (the provider's settings changed),
   * restarts the daemon (applyKey).
   */
  private keyInUse?: { name: string; key?: string };
  /**
   * The "ctxls" output channel (the daemon's log), made once: every daemon
   * started (a restart, Set API Key) writes on in it, where a channel of the
   * client's own would add "ctxls" again to the Output view's list each time.
   */
  private output?: vscode.OutputChannel;
  /** applyKey's runs, one after another (Set API Key and SecretStorage's change event both call it). */
  private keyChain: Promise<void> = Promise.resolve();
  /** The no-provider notification is open: another is not shown beside it. */
  private noProviderOpen = false;

  constructor(private readonly ext: vscode.ExtensionContext) {
    this.folders = editorFolders(ext.globalStorageUri.fsPath, ext.logUri.fsPath, ext.extensionUri.fsPath);
    this.status = vscode.window.createStatusBarItem("ctxls.status", vscode.StatusBarAlignment.Left, 100);
    this.status.name = "ctxls";
    this.modelStatus = vscode.window.createStatusBarItem("ctxls.model", vscode.StatusBarAlignment.Left, 99);
    this.modelStatus.name = "ctxls model";
    this.modelStatus.command = "ctxls.ui.chooseModel";
    this.editorView = new EditorViewCard(
      () => appletFile(this.state.context),
      () => void this.ctxls?.dropItem("applet", "*").catch(() => undefined),
    );
    this.codeBlocks = new CodeBlocks(
      { currentEditor: () => this.currentEditor(), reviewMode: () => this.state.reviewMode, syncable: (uri) => this.syncable(uri) },
      this.reviews,
    );
    this.view = new ChatView(ext.extensionUri, () => this.state, (m) => this.fromView(m), new InputHistory(ext.workspaceState), (q) => this.workspaceFiles(q));
    ext.subscriptions.push(
      this.status,
      this.modelStatus,
      this.reviews,
      this.created,
      this.editorView,
      vscode.window.registerWebviewViewProvider(ChatView.id, this.view, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.workspace.registerTextDocumentContentProvider(PreviewDocs.scheme, this.previews),
      vscode.window.onDidChangeActiveTextEditor((e) => {
        this.viewChanged(e);
        // Another text editor: a removed chip comes back for the new file (not for a prompt preview, which keeps the chip as it was).
        if (e && e.document.uri.scheme !== PreviewDocs.scheme && e.document.uri.toString() !== this.removedDoc) this.removedDoc = undefined;
        this.turnFileChanged();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.turnFileChanged()),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        this.viewChanged(e.textEditor);
        this.turnFileChanged();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // (ctxls.path is an application setting: a workspace's value is not read, and changes nothing.)
        if (e.affectsConfiguration("ctxls.path") && (vscode.workspace.getConfiguration("ctxls").get<string>("path") ?? "") !== this.pathInUse) void this.restart();
        if (e.affectsConfiguration("ctxls.sendActiveFile")) this.turnFileChanged(0);
        if (e.affectsConfiguration("ctxls")) this.sendSettings();
        if (e.affectsConfiguration("ctxls.provider")) {
          // The model new sessions get may be another now (none, with the model setting cleared).
          if (this.ctxls && this.client?.isRunning()) void this.learnDefaultModel(this.ctxls);
          // The stored key goes under the variable the provider's settings name (apikey.ts).
          void this.applyKey();
        }
        // (After the settings: the daemon reads them before the look.)
        if (e.affectsConfiguration("ctxls.projectInstructions")) void this.refreshInstructions();
      }),
      // An instructions file created, saved or deleted: the chips say so
      // (the daemon reads the files afresh at each look and each turn).
      ...watchInstructions(() => this.instructionsChanged()),
      // Trusted now: the workspace's restricted settings (its MCP servers, provider.baseURL, …) count.
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.sendSettings()),
      // Set API Key here or in another window: the daemon gets the key.
      ext.secrets.onDidChange((e) => e.key === apiKeySecret && void this.applyKey()),
    );
    const e = vscode.window.activeTextEditor;
    if (e && this.syncable(e.document.uri)) this.lastEditor = e;
    this.state.turnFile = this.turnFile();
    this.updateStatus();
    this.status.show();
  }

  // ---- the daemon ----

  private syncable(uri: vscode.Uri): boolean {
    return isUserFile(uri, this.folders);
  }

  /** Tells a running daemon the settings now (workspace/didChangeConfiguration). */
  private sendSettings(): void {
    const c = this.client;
    if (!c?.isRunning()) return;
    c.sendNotification("workspace/didChangeConfiguration", { settings: { ctxls: changedSettings() } }).catch(() => {});
  }

  start(): Promise<void> {
    this.starting = this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const setting = vscode.workspace.getConfiguration("ctxls").get<string>("path") ?? "";
    this.pathInUse = setting;
    const found = resolveBinary(setting, process.env, os.homedir());
    if (!found.ok) return this.fail(found.message);
    // Another program (not ctxls) would fail the language client's start
    // with "write EPIPE" and a handful of raw notifications: one message instead.
    const other = await notCtxls(found.path);
    if (other) return this.fail(`ctxls: ctxls.path points at ${found.path}, which is not ctxls (${other}). Set ctxls.path to the ctxls binary (go install ./cmd/ctxls puts it in ~/go/bin).`);
    // The key from SecretStorage (Set API Key) goes to the daemon alone, in
    // its environment, under the variable it reads the key from; none
    // stored: the daemon inherits VS Code's environment as it is.
    const { name, key } = await this.keyToGive();
    this.keyInUse = { name, key };
    const env = daemonEnv(process.env, name, key);
    const serverOptions: ServerOptions = { command: found.path, args: ["serve"], ...(env ? { options: { env } } : {}) };
    const keep = <T>(uri: vscode.Uri, next: () => T): T | Promise<void> => (this.syncable(uri) ? next() : Promise.resolve());
    const clientOptions: LanguageClientOptions = {
      // Only the user's files: middleware drops the editor's own (see sync.ts).
      documentSelector: [{ scheme: "file" }],
      // reviewEdits: the model's edits are reviewed here, in a diff (ctxls/reviewEdit).
      // diagnostics: the model may read VS Code's diagnostics (ctxls/diagnostics, diagnostics.ts).
      // A function: a daemon the client restarts (after a crash) gets the current session and settings.
      initializationOptions: (): InitializationOptions => ({
        provider: provider(),
        session: this.ext.workspaceState.get<string>(sessionKey),
        reviewEdits: true,
        diagnostics: true,
        // questions: the daemon's questions (an MCP tool call's permission,
        // trust in a workspace's MCP servers) come as ctxls/question and are
        // shown in the chat, on the call's card, until answered or closed.
        questions: true,
        ...daemonSettings(),
      }),
      // No synchronize: sendSettings sends the settings, the workspace's MCP servers apart.
      outputChannel: this.outputChannel(),
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: () => false,
      // No raw notifications ("write EPIPE", "Connection to server got
      // closed"): a start that fails is said by fail(), a daemon that stops
      // later by daemonStopped(), each once.
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (this.client === client && started) this.daemonStopped();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        didOpen: (doc, next) => keep(doc.uri, () => next(doc)) as Promise<void>,
        didChange: (ev, next) => keep(ev.document.uri, () => next(ev)) as Promise<void>,
        didSave: (doc, next) => keep(doc.uri, () => next(doc)) as Promise<void>,
        didClose: (doc, next) => keep(doc.uri, () => next(doc)) as Promise<void>,
        willSave: (ev, next) => keep(ev.document.uri, () => next(ev)) as Promise<void>,
      },
    };
    let started = false;
    const client = new LanguageClient("ctxls", "ctxls", serverOptions, clientOptions);
    const ctxls = new CtxlsClient(client as unknown as Connection);
    ctxls.onSessionUpdated((p) => {
      if (this.state.sessionId && p.sessionId !== this.state.sessionId) return;
      if (!this.state.sessionId) void this.adoptSession(p.sessionId);
      // A turn compacted the session: the marker is placed from the stored
      // messages once the turn has ended (a command reloads by itself).
      if (p.compactedThrough && this.state.busy) this.compactedDuringTurn = true;
      this.state.title = p.title;
      if (this.session) this.session.title = p.title;
      this.updateStatus();
      this.view.postState();
      // A turn asked elsewhere (another editor or the CLI on the same
      // sessions, another daemon): the daemon says only that the session
      // changed; show its turns when they are not the ones shown.
      if (this.state.sessionId && p.sessionId === this.state.sessionId && !this.state.busy && !p.compactedThrough) void this.followElsewhere(p.sessionId);
    });
    ctxls.onContextChanged((p) => {
      if (p.reason === "resume" && p.sessionId !== this.state.sessionId) {
        void this.loadSession(p.sessionId);
        return;
      }
      if (this.state.sessionId && p.sessionId !== this.state.sessionId) return;
      if (!this.state.sessionId) void this.adoptSession(p.sessionId);
      this.state.context = contextSets(p.context, p.missing);
      this.view.postState();
      this.editorView.contextChanged();
      // Another file in the context may bring its folder's AGENTS.md.
      if ((p.context.files ?? []).join("\n") !== this.instructionsFor) void this.refreshInstructions();
    });
    ctxls.onSessionFilesChanged((p) => this.sessionFileChanged(p));
    ctxls.onToolCall((p) => {
      const r = this.running;
      if (!r || (this.state.sessionId && p.sessionId !== this.state.sessionId)) return;
      r.answer.toolCall(p);
      this.toolLineFollows = true;
      r.redraw();
    });
    // The daemon's questions (initializationOptions.questions): on the
    // call's card in the chat, or a card of their own, never as a
    // notification with buttons, and without taking the keyboard.
    ctxls.onQuestion((p) => this.questionAsked(ctxls, p));
    ctxls.onQuestionClosed((p) => this.questionClosed(p));
    // A daemon that does not know initializationOptions.questions asks
    // with window/showMessageRequest before an MCP tool runs: the question is shown as a
    // notification, as every LSP client shows it, and on the call's card,
    // where it is answered too (the 15-second toast may have gone to the
    // notification centre). The first answer wins; both answer with the
    // chosen action's title, no answer (a closed notification) is null.
    client.onRequest("window/showMessageRequest", (p: MessageRequest, token: CancellationToken) => this.question(p, token));
    // The model's edits, applied as the language client applies them; a new
    // file it created is removed again if the user throws it away unsaved
    // (created.ts). (Registered before the start: it takes the place of the
    // client's own handler, which it calls.)
    client.onRequest("workspace/applyEdit", async (p: { edit?: { documentChanges?: unknown[] } }) => {
      const res: { applied: boolean } = await (client as unknown as { handleApplyWorkspaceEdit(p: unknown): Promise<{ applied: boolean }> }).handleApplyWorkspaceEdit(p);
      if (res.applied) this.created.add(createdUris(p.edit));
      return res;
    });
    // The daemon's messages. Errors during a turn wait for its end: a turn
    // refused for want of a provider (kind noProvider) is said in the view
    // and by this extension's own notification, in VS Code's words, with
    // Open Settings; any other is shown then.
    this.notices.reset();
    client.onNotification("window/showMessage", (p: MessageRequest) => {
      if (p.type === 1 && this.running) this.turnMessages.push(p);
      else this.notices.show(p);
    });
    // The model's edits in the ask mode: a diff to accept or reject (see review.ts).
    ctxls.onReviewEdit((p, token) => this.reviewEdit(p, token));
    // The model's diagnostics tool: the Problems panel's diagnostics (see diagnostics.ts).
    ctxls.onDiagnostics((p, token) => answerDiagnostics(p, token));
    this.client = client;
    this.ctxls = ctxls;
    try {
      await client.start();
      started = true;
      this.startError = undefined;
      this.state.banner = undefined;
      this.updateStatus();
      this.view.postState();
      const e = vscode.window.activeTextEditor;
      if (e) this.viewChanged(e);
      void this.learnDefaultModel(ctxls);
      void this.refreshInstructions();
    } catch (e) {
      this.client = undefined;
      this.ctxls = undefined;
      client.stop().catch(() => undefined);
      return this.fail(`ctxls: the daemon "${found.path}"${setting ? " (setting ctxls.path)" : ""} did not start: ${errorText(e)}. Check ctxls.path.`);
    }
  }

  private fail(message: string): void {
    this.startError = message;
    this.state.banner = { text: message, action: { label: "Open Setting", command: "openSetting" } };
    this.updateStatus();
    this.view.postState();
    void this.showStartError();
  }

  private async showStartError(): Promise<void> {
    const pick = await vscode.window.showErrorMessage(this.startError ?? "ctxls is not running", "Open Setting");
    if (pick === "Open Setting") await this.openSetting();
  }

  /** The provider's settings (ctxls.provider.baseURL, .model, …) in the settings editor. */
  private openProviderSettings(): Thenable<unknown> {
    return vscode.commands.executeCommand("workbench.action.openSettings", "ctxls.provider");
  }

  /**
   * Tells the user, once while the notification is open, that no provider
   * is usable (the daemon's kind noProvider), with Set API Key and Open
   * Settings: the one message for it, whatever asked.
   */
  private showNoProvider(): void {
    if (this.noProviderOpen) return;
    this.noProviderOpen = true;
    const [set, open] = ["Set API Key", "Open Settings"];
    void vscode.window.showErrorMessage(noProviderMessage(keyEnv()), set, open).then((a) => {
      this.noProviderOpen = false;
      if (a === set) void vscode.commands.executeCommand("ctxls.ui.setApiKey");
      else if (a === open) void this.openProviderSettings();
    });
  }

  /** The key from SecretStorage and the variable it goes in for the daemon (no key: none stored, or not to be given). */
  /** The one "ctxls" output channel, made on first need and disposed with the extension. */
  private outputChannel(): vscode.OutputChannel {
    if (!this.output) {
      this.output = vscode.window.createOutputChannel("ctxls");
      this.ext.subscriptions.push(this.output);
    }
    return this.output;
  }

  private async keyToGive(): Promise<{ name: string; key?: string }> {
    const key = (await Promise.resolve(this.ext.secrets.get(apiKeySecret)).catch(() => undefined)) || undefined;
    const name = storedKeyEnv();
    return name ? { name, key } : { name: keyEnv() };
  }

  /** Set API Key: a password box; the key goes into SecretStorage, then to a restarted daemon. */
  private async setApiKey(): Promise<void> {
    const name = keyEnv();
    const typed = await vscode.window.showInputBox({
      title: "ctxls: Set API Key",
      prompt: `The key ctxls sends to your model provider (as ${name}). Kept in VS Code's secret storage, never in settings.`,
      placeHolder: "Paste your API key",
      password: true,
      ignoreFocusOut: true,
      validateInput: keyProblem,
    });
    if (typed === undefined) return;
    await this.ext.secrets.store(apiKeySecret, typed.trim());
    await this.applyKey();
    void vscode.window.showInformationMessage(keySetMessage(name, process.env, storedKeyEnv() !== undefined));
  }

  /** Clear API Key: the key leaves SecretStorage, and the daemon restarts without it. */
  private async clearApiKey(): Promise<void> {
    const had = !!(await this.ext.secrets.get(apiKeySecret));
    if (had) await this.ext.secrets.delete(apiKeySecret);
    await this.applyKey();
    void vscode.window.showInformationMessage(keyClearedMessage(keyEnv(), process.env, had));
  }

  /**
   * Restarts the daemon when the key it should have is not the one it has:
   * set, changed or cleared in SecretStorage, or due under another variable
   * (the provider's settings changed). One run at a time.
   */
  private applyKey(): Promise<void> {
    const run = this.keyChain.then(async () => {
      const want = await this.keyToGive();
      const now = this.keyInUse;
      if (!now || (want.key === now.key && (!want.key || want.name === now.name))) return;
      await this.restart();
    });
    this.keyChain = run.catch(() => undefined);
    return run;
  }

  private openSetting(): Thenable<unknown> {
    return vscode.commands.executeCommand("workbench.action.openSettings", "ctxls.path");
  }

  private async restart(): Promise<void> {
    await this.starting;
    const old = this.client;
    this.client = undefined;
    this.ctxls = undefined;
    if (old) await old.stop().catch(() => undefined);
    this.dropQuestions();
    this.state = emptyState();
    this.state.turnFile = this.turnFile();
    this.session = undefined;
    await this.start();
  }

  /** Starts a daemon that stopped again (the session it had is resumed). */
  private async waitForDaemon(): Promise<void> {
    if (this.starting) await this.starting;
    if (!this.client?.isRunning()) await this.restart();
  }

  /**
   * The daemon exited while it ran (a crash, a kill): said in the view and
   * the status bar, not in the language client's notifications; the next
   * question (or Restart) starts it again.
   */
  private daemonStopped(): void {
    this.dropQuestions();
    this.state.banner = { text: "The ctxls daemon stopped. It starts again when you send a question, or now with Restart; the ctxls output channel may say why.", action: { label: "Restart", command: "restartDaemon" } };
    this.status.text = "$(error) ctxls stopped";
    this.status.tooltip = "The ctxls daemon stopped. Send a question or click to start it again.";
    this.status.command = "ctxls.ui.restartDaemon";
    this.view.postState();
  }

  /** The running daemon's client, or undefined after telling the user why not. */
  private async need(): Promise<CtxlsClient | undefined> {
    if (this.starting) await this.starting;
    if (this.ctxls && this.client?.isRunning()) return this.ctxls;
    if (this.startError) void this.showStartError();
    else vscode.window.showErrorMessage("ctxls: the daemon is not running; see the ctxls output channel.");
    return undefined;
  }

  async stop(): Promise<void> {
    await this.client?.stop();
  }

  // ---- what the view shows ----

  private updateStatus(): void {
    const s = this.status;
    if (this.startError) {
      s.text = "$(error) ctxls";
      s.tooltip = this.startError;
      s.command = "ctxls.ui.openSetting";
    } else if (this.state.busy) {
      s.text = `$(loading~spin) ${this.state.title}`;
      s.tooltip = "ctxls is answering. Click to stop.";
      s.command = "ctxls.ui.cancel";
    } else {
      s.text = `$(comment-discussion) ${this.state.title}`;
      s.tooltip = "ctxls session. Click to switch sessions.";
      s.command = "ctxls.ui.resumeSession";
    }
    void vscode.commands.executeCommand("setContext", "ctxls.busy", this.state.busy);
    const m = this.modelStatus;
    if (this.startError) {
      m.hide();
      return;
    }
    this.state.model = this.session?.meta?.model || provider().model || this.defaultModel;
    m.text = `$(sparkle) ${this.state.model ?? "model"}`;
    m.tooltip =
      `ctxls model: ${this.state.model ?? "the provider's default"}. Click to choose another.` +
      (this.state.usage ? `\nThis session: ${this.state.usage} tokens.` : "");
    m.show();
  }

  /** The model and usage line in the chat's header, and the model's status bar item. */
  private postSessionLine(): void {
    this.updateStatus();
    this.view.postSessionLine(this.state.model, this.state.usage);
  }

  /** The provider's default model, for the status bar when neither the session nor the settings name one. */
  private async learnDefaultModel(c: CtxlsClient): Promise<void> {
    try {
      const r = await c.models(this.state.sessionId);
      this.defaultModel = r.default || r.current || undefined;
    } catch {
      // No provider, or one that lists no models: the item says "model".
      this.defaultModel = undefined;
    }
    this.postSessionLine();
  }

  /** What the session's turns cost, asked again after each turn and on a session switch. */
  private async refreshUsage(): Promise<void> {
    const c = this.ctxls;
    const id = this.state.sessionId;
    if (!c || !id) {
      this.state.usage = undefined;
      this.postSessionLine();
      return;
    }
    try {
      const u = await c.usage(id);
      if (id !== this.state.sessionId) return;
      this.state.usage = usageLine(u);
    } catch {
      this.state.usage = undefined;
    }
    this.postSessionLine();
  }

  // ---- the file that goes with the question ----

  /** Whether the active editor's file goes with each question (ctxls.sendActiveFile). */
  private sendActiveFile(): boolean {
    return vscode.workspace.getConfiguration("ctxls").get<boolean>("sendActiveFile", true) !== false;
  }

  /** The active editor's file and selected lines as the chip above the input, or undefined. */
  private turnFile(): TurnFileChip | undefined {
    if (!this.sendActiveFile()) return undefined;
    let e = vscode.window.activeTextEditor;
    // A non-text editor in front (the settings, a webview): the text editor last worked in, while it is shown.
    const l = this.lastEditor;
    if (!e && l && !l.document.isClosed) e = vscode.window.visibleTextEditors.find((v) => v.document === l.document);
    // A prompt preview in front: what it previewed still goes (the text editor last worked in, shown or not).
    else if (e?.document.uri.scheme === PreviewDocs.scheme && l && !l.document.isClosed) e = vscode.window.visibleTextEditors.find((v) => v.document === l.document) ?? l;
    if (!e || !this.syncable(e.document.uri)) return undefined;
    const sel = e.selection;
    const chip = turnFileChip(e.document.uri.fsPath, sel.isEmpty ? undefined : selectedLines(sel.start, sel.end));
    if (this.removedDoc === e.document.uri.toString()) chip.removed = true;
    return chip;
  }

  /** Redraws the chip (selection changes come in bursts: drawn once they rest). */
  private turnFileChanged(delay = 80): void {
    if (this.turnFileTimer) clearTimeout(this.turnFileTimer);
    this.turnFileTimer = setTimeout(() => {
      this.state.turnFile = this.turnFile();
      this.view.postTurnFile(this.state.turnFile);
    }, delay);
  }

  /** The turn's files: the chip's, unless removed or turned off. */
  private turnFiles(): string[] {
    const f = this.turnFile();
    return f && !f.removed ? [f.item] : [];
  }

  private setSession(s: Session | undefined): void {
    this.session = s;
    this.state.sessionId = s?.id;
    this.state.title = s?.title ?? "New session";
    this.state.reviewMode = s?.meta?.reviewMode || "ask";
    void this.ext.workspaceState.update(sessionKey, s?.id);
    this.postSessionLine();
  }

  /**
   * Shows the session's stored turns when they differ from the ones shown
   * (a turn added, asked again or removed elsewhere): by their number and
   * the last one's question and status, so the session's own updates (its
   * title after a turn here) change nothing.
   */
  private async followElsewhere(id: string): Promise<void> {
    const c = this.ctxls;
    if (!c) return;
    // Changes come close together (a question stored, then its answer):
    // only the latest look's messages are shown, or an earlier look that
    // answered last would put back the turn without its answer.
    const seq = ++this.followSeq;
    try {
      const shown = await c.show(id);
      if (seq !== this.followSeq || this.state.busy || this.state.sessionId !== id || !shown?.session?.id) return;
      const stored = this.storedTurns(shown.messages ?? []);
      // The last turn's message ids change when its answer is stored (its
      // question and status do not).
      const sig = (ts: { question: string; status: string; ids?: number[] }[]) =>
        `${ts.length}\u0000${ts.at(-1)?.question ?? ""}\u0000${ts.at(-1)?.status ?? ""}\u0000${ts.at(-1)?.ids?.join(",") ?? ""}`;
      if (sig(stored) === sig(this.state.turns)) return;
      this.setSession(shown.session);
      this.state.turns = stored;
      this.view.postState();
      void this.refreshUsage();
    } catch {
      // The session may have been deleted meanwhile; the view keeps what it has.
    }
  }

  /** Learns the current session's title and folder without touching the turns shown. */
  private async adoptSession(id?: string): Promise<void> {
    const c = this.ctxls;
    if (!c) return;
    try {
      const shown = await c.show(id);
      if (!shown?.session?.id) return;
      this.setSession(shown.session);
      this.state.sessionFiles = await this.sessionFiles();
      this.view.postState();
      void this.refreshUsage();
    } catch {
      // The session may have been deleted meanwhile; the view keeps what it has.
    }
  }

  /** Shows a session: its title, messages, context and files. */
  private async loadSession(id?: string, highlight?: number): Promise<void> {
    const c = this.ctxls;
    if (!c) return;
    const shown = await c.show(id);
    if (!shown?.session?.id) return;
    this.setSession(shown.session);
    this.state.turns = this.storedTurns(shown.messages ?? []);
    const { context, instructions } = await c.context();
    this.state.context = contextSets(context ?? {});
    this.setInstructions(instructions, context?.files);
    this.state.sessionFiles = await this.sessionFiles();
    this.state.highlight = highlight;
    this.view.postState();
    void this.refreshUsage();
  }

  private async sessionFiles(): Promise<SessionFile[]> {
    const c = this.ctxls;
    if (!c || !this.state.sessionId) return [];
    const lists = await Promise.all(subdirs.map((subdir) => c.command("ctxls.files.list", { subdir }).catch(() => ({ files: [] as string[] }))));
    return lists.flatMap((l, i) => (l.files ?? []).map((name) => ({ subdir: subdirs[i], name })));
  }

  private async sessionFileChanged(p: SessionFilesChanged): Promise<void> {
    if (this.state.sessionId && p.sessionId !== this.state.sessionId) return;
    if (!this.state.sessionId) await this.adoptSession(p.sessionId);
    if (p.by === "model") {
      const t = this.state.turns[this.state.turns.length - 1];
      if (t && !t.files.some((f) => f.subdir === p.subdir && f.name === p.name)) {
        t.files.push({ subdir: p.subdir, name: p.name, by: p.by });
      }
    }
    this.state.sessionFiles = await this.sessionFiles();
    this.view.postState();
  }

  private resetView(title = "New session"): void {
    const { banner, instructions } = this.state;
    this.state = emptyState(title);
    this.state.banner = banner;
    this.state.turnFile = this.turnFile();
    // The workspace's instructions stay while the new session's are looked up.
    this.state.instructions = instructions;
    void this.refreshInstructions();
  }

  // ---- the project's instructions files ----

  /**
   * Shows the instructions files the daemon listed (ctxls.context.get or a
   * turn's result) as chips in the header; none while
   * ctxls.projectInstructions is off. files: the context's files they were
   * listed for.
   */
  private setInstructions(list: InstructionFile[] | undefined, files?: string[]): void {
    this.instructionsSeq++;
    if (files) this.instructionsFor = files.join("\n");
    const on = vscode.workspace.getConfiguration("ctxls").get<boolean>("projectInstructions") !== false;
    // The daemon gives an open file's text from the editor; it differs from
    // the disk's only while the document has unsaved edits.
    const dirty = (p: string) => vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.scheme === "file" && d.uri.fsPath === p);
    const given = (list ?? []).map((f) => ({ ...f, unsaved: f.unsaved && dirty(f.path) }));
    this.state.instructions = on ? instructionChips(given, (p) => vscode.workspace.asRelativePath(p)) : [];
  }

  /** Asks the daemon which instructions files a turn would give the model now, and shows them. */
  private async refreshInstructions(): Promise<void> {
    const c = this.ctxls;
    if (!c || !this.client?.isRunning()) return;
    const seq = ++this.instructionsSeq;
    try {
      const { context, instructions } = await c.context();
      if (seq !== this.instructionsSeq) return;
      const before = JSON.stringify(this.state.instructions ?? []);
      this.setInstructions(instructions, context?.files ?? []);
      if (JSON.stringify(this.state.instructions) !== before) this.view.postState();
    } catch {
      // The daemon stopped meanwhile: the chips stay as they were.
    }
  }

  /** An instructions file changed on the disk: looked up again once the changes settle. */
  private instructionsChanged(): void {
    if (this.instructionsTimer) clearTimeout(this.instructionsTimer);
    this.instructionsTimer = setTimeout(() => void this.refreshInstructions(), 200);
  }

  // ---- chat ----

  private question(p: MessageRequest, token: CancellationToken): Promise<{ title: string } | null> {
    const r = this.running;
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
   * One of the model's edits to review (ctxls/reviewEdit): a diff editor
   * with Accept, Accept All and Reject, the same answers on the call's card
   * in the chat. The first answer wins; the daemon giving up (its timeout,
   * the turn cancelled) closes the diff.
   */
  private reviewEdit(p: ReviewEditParams, token: { onCancellationRequested(l: () => void): unknown }): Promise<ReviewEditResult> {
    const name = baseName(p.path);
    const review = this.reviews.show({
      kind: "model",
      path: p.path,
      original: p.create ? undefined : vscode.Uri.parse(p.uri),
      proposed: p.newText,
      title: `${name}: proposed ${p.create ? "new file" : "edit"} (ctxls)`,
    });
    token.onCancellationRequested(() => review.answer("reject"));
    const r = this.running;
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
   * A ctxls/question: shown on its tool call's card (a permission), or on a
   * card of its own after the turn's parts so far (a trust question). The
   * view is not revealed or focused (typing in an editor must not answer
   * it); its badge counts the open questions, and a view that is not shown
   * gets a plain notice, without buttons.
   */
  private questionAsked(c: CtxlsClient, p: QuestionParams): void {
    const r = this.running;
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
    if (!r || (p.sessionId && this.state.sessionId && p.sessionId !== this.state.sessionId)) {
      // Nowhere to show it (no turn of this chat is running): said, without buttons.
      void vscode.window.showInformationMessage(`${p.message} (ctxls asked outside this window's chat; it is declined when its time runs out.)`);
      return;
    }
    if (p.toolCallId) r.answer.askFor(p.toolCallId, ask);
    else r.answer.askAlone(ask);
    this.questions.set(p.id, { ask, answer: r.answer, redraw: r.turnRedraw, actions: p.actions });
    r.redraw();
    this.updateBadge();
    if (!this.view.visible) void vscode.window.showInformationMessage(`${p.message} Answer it in the ctxls chat.`);
  }

  /** A ctxls/questionClosed: the question's answers go (on every card showing it), its card says what came of it. */
  private questionClosed(p: QuestionClosedParams): void {
    const q = this.questions.get(p.id);
    if (!q) return;
    this.questions.delete(p.id);
    q.answer.closed(q.ask, questionOutcome(p.outcome, q.actions));
    q.redraw();
    this.updateBadge();
  }

  /** The daemon stopped or is restarted: its questions will not be closed; their cards say so. */
  private dropQuestions(): void {
    for (const q of this.questions.values()) {
      q.answer.closed(q.ask, "not answered: the daemon stopped");
      q.redraw();
    }
    this.questions.clear();
    this.updateBadge();
  }

  /** The view's badge: how many questions wait for an answer. */
  private updateBadge(): void {
    this.view.setBadge(this.questions.size);
  }

  /** An answer given on a question's own card (a trust question). */
  private answerQuestionCard(id: string, title: string): void {
    if (this.turnAsk?.id === id) {
      this.turnAsk.settle(title);
      return;
    }
    const ask = this.running?.answer.askById(id) ?? this.questions.get(id)?.ask;
    if (ask && ask.outcome === undefined && ask.actions.includes(title)) ask.answer(title);
  }

  /** An answer given on a tool call's card. */
  private answerOnCard(id: string, title: string): void {
    const ask = this.running?.answer.askOf(id);
    if (ask?.actions.includes(title)) ask.answer(title);
  }

  /**
   * Retry, Regenerate and Edit: turn index's question asked again (text, when
   * given, is the edited question) in place of it and of what followed it
   * (ctxls/chat with rewind: the daemon removes them from the session).
   */
  private async askAgain(index: number, text?: string, images?: string[]): Promise<void> {
    const turn = this.state.turns[index];
    if (!turn) return;
    if (this.state.busy) {
      vscode.window.showInformationMessage("ctxls: a turn is running; wait for it or press Stop.");
      return;
    }
    const c = await this.need();
    if (!c || !this.state.sessionId) return;
    const id = turn.questionId ?? (await this.storedQuestionId(c, index));
    if (id === undefined) {
      vscode.window.showErrorMessage("ctxls: this question is not stored in the session, so it cannot be asked again in its place; ask it as a new question.");
      return;
    }
    const later = this.state.turns.length - index - 1;
    if (later > 0) {
      const go = "Ask Again";
      const what = later === 1 ? "the turn after it" : `the ${later} turns after it`;
      const pick = await vscode.window.showWarningMessage(`ctxls: asking this question again removes its answer and ${what} from the session.`, { modal: true }, go);
      if (pick !== go) return;
    }
    // The turns taken back changed files: asked in the chat, on the turn, whether to undo those changes too.
    let undone: string | undefined;
    const undoQuestion = rewindUndoQuestion(this.state.turns.slice(index));
    if (undoQuestion) {
      const answer = await this.askOnTurn(index, undoQuestion, [UndoAnswers.undo, UndoAnswers.keep]);
      // Not answered (another question sent, the session changed): nothing is asked again.
      if (answer === undefined || this.state.turns[index] !== turn || this.state.busy) return;
      if (answer === UndoAnswers.undo) {
        try {
          const r = await c.command("ctxls.session.undo", { sessionId: this.state.sessionId, from: id });
          undone = "Before this answer: " + undoNote(r, false).replace(/^Undid/, "undid");
        } catch (e) {
          undone = "Before this answer, the changes were not undone: " + errorText(e);
        }
      }
    }
    this.state.turns.splice(index);
    this.view.postState();
    await this.ask(text ?? turn.question, { rewind: id, ...(images?.length ? { images } : {}), ...(undone ? { undoNote: undone } : {}) });
  }

  /**
   * A question on turn index, in the chat (not a modal): its answers are
   * buttons on a card under the turn. Resolves with the answer's title, or
   * undefined when another question replaced it or a question was sent.
   */
  private askOnTurn(index: number, message: string, actions: string[]): Promise<string | undefined> {
    this.turnAsk?.settle(undefined);
    const turn = this.state.turns[index];
    const id = `turn-ask-${++this.turnAskSeq}`;
    return new Promise((resolve) => {
      this.turnAsk = {
        id,
        settle: (title) => {
          if (this.turnAsk?.id !== id) return;
          this.turnAsk = undefined;
          turn.undoAsk = undefined;
          this.view.postState();
          resolve(title);
        },
      };
      turn.undoAsk = { id, message, actions };
      this.view.postState();
    });
  }

  /**
   * The view's turns get their stored question ids where they lack them (a
   * turn asked in this window has none until the session is shown again):
   * paired with the session's questions in order, while their texts agree.
   */
  private async learnQuestionIds(c: CtxlsClient): Promise<void> {
    if (this.state.turns.every((t) => t.questionId !== undefined)) return;
    const shown = await c.show(this.state.sessionId);
    const questions = (shown.messages ?? []).filter((m) => m.role === "user");
    this.state.turns.forEach((t, i) => {
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
    const c = await this.need();
    if (!c) return;
    if (!this.state.sessionId) {
      this.undoFailed(index, "nothing to undo: this chat has no session yet");
      return;
    }
    const from = index === undefined ? undefined : this.state.turns[index]?.questionId ?? (await this.storedQuestionId(c, index));
    let r;
    try {
      r = await c.command("ctxls.session.undo", { sessionId: this.state.sessionId, ...(from !== undefined ? { from } : {}) });
    } catch (e) {
      this.undoFailed(index, errorText(e));
      return;
    }
    await this.learnQuestionIds(c).catch(() => undefined);
    // From a turn: it and every later turn that changed files had their changes taken back.
    if (from !== undefined) this.state.turns.forEach((t, i) => i > index! && turnChangedFiles(t) && this.setUndo(t, { undone: true }));
    let noted = from !== undefined ? index! : this.state.turns.findIndex((t) => t.questionId === r.turn);
    if (noted < 0) noted = this.state.turns.length - 1;
    const t = this.state.turns[noted];
    // A turn whose every file was left is not undone (nothing for Redo).
    if (t) this.setUndo(t, { undone: r.restored?.length ? true : (t.undo?.undone ?? false), note: undoNote(r, false) });
    this.view.postState();
  }

  /** Redo (ctxls.session.redo): the turn undone last gets its changes again; its note says what came of it. */
  async redoChanges(index?: number): Promise<void> {
    const c = await this.need();
    if (!c) return;
    let r;
    try {
      r = await c.command("ctxls.session.redo", this.state.sessionId ? { sessionId: this.state.sessionId } : {});
    } catch (e) {
      this.undoFailed(index, errorText(e));
      return;
    }
    await this.learnQuestionIds(c).catch(() => undefined);
    let i = this.state.turns.findIndex((t) => t.questionId === r.turn);
    if (i < 0) i = index ?? this.state.turns.length - 1;
    const t = this.state.turns[i];
    if (t) this.setUndo(t, { undone: false, note: undoNote(r, true) });
    this.view.postState();
  }

  /** Sets what undo or redo did to a turn, kept by its question's id. */
  private setUndo(t: ViewTurn, u: TurnUndo): void {
    t.undo = u;
    if (t.questionId !== undefined) this.undoByQuestion.set(t.questionId, u);
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
    return this.withUndo(turnsFromMessages(messages).map(viewTurn)).map((t) => {
      const files = t.questionId !== undefined ? kept.get(t.questionId) : undefined;
      const went = files ? sentWith(files, "", roots, (p) => vscode.workspace.asRelativePath(p)) : mentionedFiles(t.question, roots);
      return went.length ? { ...t, withFiles: went } : t;
    });
  }

  /** The workspace's files for the list after "@" (ctxls.workspace.files); none while the daemon is not running. */
  private async workspaceFiles(query: string): Promise<string[]> {
    const c = this.ctxls;
    if (!c || !this.client?.isRunning()) return [];
    const r = await c.command("ctxls.workspace.files", { query, limit: mentionLimit });
    return (r.files ?? []).map((f) => f.path).filter(mentionable);
  }

  /** Turns read again get back what undo and redo did to them. */
  private withUndo(turns: ViewTurn[]): ViewTurn[] {
    for (const t of turns) {
      const u = t.questionId !== undefined ? this.undoByQuestion.get(t.questionId) : undefined;
      if (u) t.undo = u;
    }
    return turns;
  }

  /** An undo or redo refused ("nothing to undo: …"): said under the turn it was asked on (the last, from the palette). */
  private undoFailed(index: number | undefined, text: string): void {
    const t = this.state.turns[index ?? this.state.turns.length - 1];
    if (!t) {
      void vscode.window.showInformationMessage(`ctxls: ${text}`);
      return;
    }
    this.setUndo(t, { undone: t.undo?.undone ?? false, note: text.charAt(0).toUpperCase() + text.slice(1), failed: true });
    this.view.postState();
  }

  /** The stored id of turn index's question (a turn asked in this window has none in the view yet). */
  private async storedQuestionId(c: CtxlsClient, index: number): Promise<number | undefined> {
    const shown = await c.show(this.state.sessionId);
    const q = (shown.messages ?? []).filter((m) => m.role === "user")[index];
    return q && q.content === this.state.turns[index]?.question ? q.id : undefined;
  }

  async ask(message: string, opts: { files?: string[]; rewind?: number; images?: string[]; undoNote?: string } = {}): Promise<void> {
    // A question sent while one waits on a turn: that one goes unanswered.
    this.turnAsk?.settle(undefined);
    if (!this.startError && this.client && !this.starting && !this.client.isRunning()) {
      // The daemon stopped (it crashed, or was killed): the question stays
      // in the input, to send once it runs again.
      this.view.postRestoreInput(message);
      await this.waitForDaemon();
      if (this.client?.isRunning()) vscode.window.showInformationMessage("ctxls: the daemon had stopped and is running again; your question is still in the chat's input: press Enter to send it.");
      else vscode.window.showErrorMessage("ctxls: the daemon stopped and could not be started again; your question is still in the chat's input. See the ctxls output channel.");
      return;
    }
    const c = await this.need();
    if (!c) {
      this.view.postRestoreInput(message);
      return;
    }
    if (this.state.busy) {
      vscode.window.showInformationMessage("ctxls: a turn is running; wait for it or press Stop.");
      return;
    }
    await this.view.reveal(false);
    if (this.state.banner?.kind === "provider") {
      this.state.banner = undefined;
      this.view.postState();
    }
    // The chip's file (the active editor's, with its selected lines) goes with the question.
    const files = opts.files ?? this.turnFiles();
    this.state.highlight = undefined;
    const index = this.state.turns.length;
    const turn: ViewTurn = { question: message, parts: [], status: "streaming", files: [] };
    // Listed under the question: its file and the files it mentions (the daemon sends those too).
    const withFiles = sentWith(files, message, workspaceRoots(), (p) => vscode.workspace.asRelativePath(p));
    if (withFiles.length) turn.withFiles = withFiles;
    if (opts.undoNote) turn.undo = { undone: false, note: opts.undoNote };
    this.state.turns.push(turn);
    this.state.busy = true;
    this.view.postTurn(index, turn);
    this.view.postBusy(true);
    this.updateStatus();
    const answer = new StreamingAnswer();
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      turn.parts = answer.view();
      this.view.postTurn(index, turn);
    };
    // After the turn (a question closed late): only while this turn is still the one shown there.
    const turnRedraw = () => {
      if (this.state.turns[index] !== turn) return;
      if (this.running?.answer === answer) flush();
      else {
        turn.parts = answer.view();
        this.view.postTurn(index, turn);
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
            this.view.postTurn(index, turn);
          },
          onActivity: (m) => {
            // A tool call's line: its card says it already.
            if (this.toolLineFollows) {
              this.toolLineFollows = false;
              return;
            }
            turn.activity = m;
            this.view.postTurn(index, turn);
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
      this.state.turns.splice(index, 1);
      this.state.busy = false;
      const name = keyEnv();
      const detail = daemonWordsHelp(provider(), process.env, name, !!this.keyInUse?.key) ? `\n(${errorText(out.error)})` : "";
      this.state.banner = {
        text: `Not sent: ${noProviderMessage(name)} Your question is back in the input.${detail}`,
        actions: [
          { label: "Set API Key", command: "setApiKey" },
          { label: "Open Settings", command: "openProviderSettings" },
        ],
        kind: "provider",
      };
      this.view.postState();
      this.view.postBusy(false);
      this.view.postRestoreInput(message);
      this.updateStatus();
      this.showNoProvider();
      // A question asked again that never started removed nothing: show the session as it is.
      if (opts.rewind !== undefined) await this.loadSession(this.state.sessionId);
      return;
    }
    const messages = this.turnMessages;
    this.turnMessages = [];
    if (out.kind !== ErrorKinds.noProvider) for (const m of messages) this.notices.show(m);
    turn.usage = usageLine(out.usage) ?? turn.usage;
    this.state.busy = false;
    this.view.postTurn(index, turn);
    this.view.postBusy(false);
    // The instructions files the turn gave the model (its own files may have brought more).
    if (out.instructions) {
      const before = JSON.stringify(this.state.instructions ?? []);
      this.setInstructions(out.instructions);
      if (JSON.stringify(this.state.instructions) !== before) this.view.postState();
    }
    this.updateStatus();
    if (out.sessionId ? out.sessionId !== this.state.sessionId : !this.state.sessionId) await this.adoptSession(out.sessionId);
    if (this.compactedDuringTurn || opts.images?.length) {
      // A summary's marker, or the names the question's images got in the
      // session folder: shown as stored.
      this.compactedDuringTurn = false;
      await this.loadSession(this.state.sessionId);
    }
    await this.refreshUsage();
  }

  private fromView(m: FromView): void {
    const run = (f: () => Promise<unknown>) =>
      void f().catch((e) => {
        if (errorKind(e) === ErrorKinds.noProvider) this.showNoProvider();
        else void vscode.window.showErrorMessage(`ctxls: ${errorText(e)}`);
      });
    switch (m.type) {
      case "send":
        run(() => this.ask(m.text, m.images?.length ? { images: m.images } : {}));
        break;
      case "rewind":
        run(() => this.askAgain(m.index, m.text, m.images));
        break;
      case "stop":
        run(() => this.cancel());
        break;
      case "openFile":
        run(() => this.openFile(m.path));
        break;
      case "openMatch":
        run(() => this.openMatch(m.path, m.line));
        break;
      case "openSessionFile":
        run(async () => {
          const c = await this.need();
          if (!c) return;
          // The folder is renamed with the title: ask where it is now, and
          // again if it moved between the answer and the opening.
          let file = "";
          for (let tries = 0; tries < 3; tries++) {
            if (tries > 0) await new Promise((r) => setTimeout(r, 200));
            const { session } = await c.show(this.state.sessionId);
            if (!session?.folder) return;
            file = path.join(session.folder, m.subdir, m.name);
            if (await vscode.workspace.fs.stat(vscode.Uri.file(file)).then(() => true, () => false)) break;
          }
          await this.openFile(file);
        });
        break;
      case "openLink":
        run(() => this.openLink(m.href));
        break;
      case "removeTurnFile":
        this.removedDoc = this.turnFile()?.path ? vscode.Uri.file(this.turnFile()!.path).toString() : undefined;
        this.turnFileChanged(0);
        break;
      case "restoreTurnFile":
        this.removedDoc = undefined;
        this.turnFileChanged(0);
        break;
      case "addContextFile":
        run(() => this.addContextFile());
        break;
      case "preview":
        run(async () => {
          const c = await this.need();
          if (c) await this.previewPrompt(c, { text: m.text, images: m.images });
        });
        break;
      case "removeContext":
        run(async () => {
          const c = await this.need();
          if (c) await c.dropItem(m.set, m.value);
        });
        break;
      case "removeSessionFile":
        run(async () => {
          const c = await this.need();
          if (!c || !this.state.sessionId) return;
          await c.command("ctxls.files.remove", { sessionId: this.state.sessionId, name: m.name });
          this.state.sessionFiles = await this.sessionFiles();
          this.view.postState();
          vscode.window.setStatusBarMessage(`ctxls: deleted sources/${m.name} from the session folder`, 4000);
        });
        break;
      case "copy":
        run(async () => {
          await vscode.env.clipboard.writeText(m.text);
          vscode.window.setStatusBarMessage("ctxls: code copied", 2000);
        });
        break;
      case "insertCode":
        run(() => this.codeBlocks.insert(m.text));
        break;
      case "applyCode":
        run(() => this.codeBlocks.apply(m.text, m.file));
        break;
      case "action":
        if (m.command === "openSetting") run(async () => this.openSetting());
        else if (m.command === "openProviderSettings") run(async () => this.openProviderSettings());
        else if (m.command === "setApiKey") run(async () => vscode.commands.executeCommand("ctxls.ui.setApiKey"));
        else if (m.command === "restartDaemon") run(async () => this.restart());
        else if (m.command === "setReviewMode") run(async () => vscode.commands.executeCommand("ctxls.ui.setReviewMode"));
        else if (m.command === "chooseModel") run(async () => vscode.commands.executeCommand("ctxls.ui.chooseModel"));
        break;
      case "undoTurn":
        run(() => this.undoChanges(m.index));
        break;
      case "redoTurn":
        run(() => this.redoChanges(m.index));
        break;
      case "toolAnswer":
        this.answerOnCard(m.id, m.title);
        break;
      case "questionAnswer":
        this.answerQuestionCard(m.id, m.title);
        break;
    }
  }

  /**
   * Preview Prompt: the exact input the model would get for the chat's
   * draft, with the files its chips send (the editor's file unless its chip
   * was removed; the context's files), computed by the daemon; with no
   * draft, for a message asked for in an input box. Nothing is sent.
   */
  private async previewPrompt(c: CtxlsClient, draft: Draft | undefined): Promise<void> {
    let message = draft?.text.trim() ? draft.text : undefined;
    if (!message) {
      message = await vscode.window.showInputBox({ prompt: "Preview the prompt for this message (nothing is sent)", placeHolder: "Your question" });
      if (!message) return;
    }
    const [p, { context }] = await Promise.all([c.preview(message, this.turnFiles()), c.context()]);
    const uri = this.previews.add(previewMarkdown(p, message, { contextFiles: context?.files ?? [], images: draft?.text.trim() ? draft.images : 0 }));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** The chat view's +: a workspace file picked from a list goes into the session's context (files set, merged). */
  private async addContextFile(): Promise<void> {
    const c = await this.need();
    if (!c) return;
    type Item = vscode.QuickPickItem & { uri: vscode.Uri };
    const items = (async (): Promise<Item[]> => {
      const out: Item[] = [];
      const seen = new Set<string>();
      const add = (uri: vscode.Uri, description?: string) => {
        if (seen.has(uri.toString()) || !this.syncable(uri)) return;
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

  /** Choose Model: the provider's models (ctxls.models.list), or a name typed in; ctxls.session.setModel. */
  private async chooseModel(c: CtxlsClient): Promise<void> {
    type Item = vscode.QuickPickItem & { model: string };
    const qp = vscode.window.createQuickPick<Item>();
    qp.title = "ctxls: Choose Model";
    qp.step = 1;
    qp.totalSteps = 2;
    qp.placeholder = "Pick a model of the provider's, or type a model's name";
    qp.busy = true;
    let listed: Item[] = [];
    let current = this.state.model ?? "";
    let fallback = "";
    const typed = (): Item[] => {
      const v = qp.value.trim();
      return v && !listed.some((i) => i.model === v) ? [{ label: v, description: "use this name", model: v, alwaysShow: true }] : [];
    };
    const refresh = () => (qp.items = [...typed(), ...listed]);
    qp.onDidChangeValue(refresh);
    const chosen = new Promise<string | undefined>((resolve) => {
      qp.onDidAccept(() => {
        const it = qp.selectedItems[0] ?? qp.activeItems[0];
        const v = it?.model ?? qp.value.trim();
        if (v || it) resolve(v);
        qp.hide();
      });
      qp.onDidHide(() => resolve(undefined));
    });
    qp.show();
    try {
      const r = await c.models(this.state.sessionId);
      current = r.current || current;
      fallback = r.default;
      this.defaultModel = r.default || this.defaultModel;
      listed = (r.models ?? []).map((m) => ({
        label: m,
        description: [m === current ? "current" : "", m === fallback ? "new sessions' model" : ""].filter(Boolean).join(", ") || undefined,
        model: m,
      }));
      if (current && !listed.some((i) => i.model === current)) listed.unshift({ label: current, description: "current", model: current });
      refresh();
      const cur = qp.items.find((i) => i.model === current);
      if (cur && !qp.value) qp.activeItems = [cur];
    } catch (e) {
      if (errorKind(e) === ErrorKinds.noProvider) {
        // Nothing to ask for models: the one no-provider message says what to set.
        qp.placeholder = "No models to list (see the notification): type a model's name";
        this.showNoProvider();
      } else qp.placeholder = `The provider listed no models (${errorText(e)}): type a model's name`;
    } finally {
      qp.busy = false;
    }
    const model = await chosen;
    qp.dispose();
    if (model === undefined) return;
    const scope = await this.pickModelScope(model, fallback);
    if (!scope) return;
    const { session } = await c.setModel(model, this.state.sessionId, scope === "new");
    if (scope === "new") this.defaultModel = model;
    this.setSession(session);
    this.view.postState();
    const used = session.meta?.model || model;
    vscode.window.setStatusBarMessage(scope === "new" ? `ctxls: this session and every new one use ${used}` : `ctxls: this session's turns use ${used}`, 4000);
  }

  /**
   * Choose Model's second step: the model for this session only, or for
   * this one and every new session (ctxls.session.setModel's default).
   * A second step of the same picker, as VS Code's own multi-step inputs
   * go (title with "2/2"), rather than buttons on the model's rows: those
   * show only under the mouse, have no keys, and an icon cannot say "new
   * sessions". Enter takes the first row, this session only, as Choose
   * Model did before.
   */
  private pickModelScope(model: string, fallback: string): Promise<"session" | "new" | undefined> {
    type Item = vscode.QuickPickItem & { scope: "session" | "new" };
    const qp = vscode.window.createQuickPick<Item>();
    qp.title = `ctxls: where to use ${model}`;
    qp.step = 2;
    qp.totalSteps = 2;
    qp.placeholder = "Only this session, or this one and every session you start from now on?";
    qp.items = [
      { label: "This session", description: fallback ? `new sessions keep ${fallback}` : undefined, scope: "session" },
      { label: "This and new sessions", description: `every session you start from now on uses ${model} too`, scope: "new" },
    ];
    return new Promise((resolve) => {
      qp.onDidAccept(() => {
        resolve((qp.selectedItems[0] ?? qp.activeItems[0])?.scope);
        qp.hide();
      });
      qp.onDidHide(() => {
        resolve(undefined);
        qp.dispose();
      });
      qp.show();
    });
  }

  async cancel(): Promise<void> {
    if (!this.ctxls || !(await this.ctxls.cancel())) vscode.window.showInformationMessage("ctxls: nothing to cancel");
  }

  /** Opens a file in the editor, in the extension host (works in remote workspaces too). */
  async openFile(p: string, selection?: vscode.Range): Promise<void> {
    const uri = vscode.Uri.file(p);
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      vscode.window.showWarningMessage(`ctxls: ${p} does not exist (any more).`);
      return;
    }
    if (/\.(png|jpe?g|gif|webp)$/i.test(p)) {
      // An image (a question's, in the session folder): VS Code's image viewer.
      await vscode.commands.executeCommand("vscode.open", uri, { preview: true, viewColumn: vscode.ViewColumn.Active });
      return;
    }
    await vscode.window.showTextDocument(uri, { preview: true, selection, viewColumn: vscode.ViewColumn.Active });
  }

  /** Opens a search result's file (named relative to the workspace folders, as the daemon names it) at its 1-based line. */
  async openMatch(p: string, line?: number): Promise<void> {
    const file = resolveResultPath(p, (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
    if (!file) {
      vscode.window.showWarningMessage(`ctxls: ${p} is relative to a workspace folder, and none is open.`);
      return;
    }
    const at = line && line > 0 ? new vscode.Range(line - 1, 0, line - 1, 0) : undefined;
    await this.openFile(file, at);
  }

  async openLink(href: string): Promise<void> {
    if (/^https?:\/\//i.test(href)) {
      await vscode.env.openExternal(vscode.Uri.parse(href));
      return;
    }
    let target = href;
    let line: number | undefined;
    const m = /^(.*?)(?:#L(\d+))?$/.exec(target);
    if (m && m[2]) {
      target = m[1];
      line = Number(m[2]) - 1;
    }
    if (/^file:/i.test(target)) target = vscode.Uri.parse(target).fsPath;
    else if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      vscode.window.showInformationMessage(`ctxls: links of this kind are not opened from the chat: ${href}`);
      return;
    } else if (!path.isAbsolute(target)) {
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? this.session?.folder;
      if (!root) return;
      target = path.join(root, decodeURIComponent(target));
    }
    await this.openFile(target, line !== undefined ? new vscode.Range(line, 0, line, 0) : undefined);
  }

  // ---- the editor's view (ctxls/didChangeView), debounced ----

  private viewChanged(editor: vscode.TextEditor | undefined): void {
    if (!editor || !this.syncable(editor.document.uri)) return;
    this.lastEditor = editor;
    if (this.viewTimer) clearTimeout(this.viewTimer);
    this.viewTimer = setTimeout(() => {
      const c = this.ctxls;
      if (!c || !this.client?.isRunning() || editor.document.isClosed) return;
      const r = (x: vscode.Range) => ({ start: { line: x.start.line, character: x.start.character }, end: { line: x.end.line, character: x.end.character } });
      const vis = editor.visibleRanges[0];
      c.didChangeView({ textDocument: { uri: editor.document.uri.toString() }, selection: r(editor.selection), ...(vis ? { visibleRange: r(vis) } : {}) });
    }, 300);
  }

  /** The text editor the user last worked in, even when the chat view has focus. */
  private currentEditor(): vscode.TextEditor | undefined {
    const a = vscode.window.activeTextEditor;
    if (a && this.syncable(a.document.uri)) return a;
    const l = this.lastEditor;
    if (l && !l.document.isClosed) {
      // The same document in a visible editor keeps its live selection.
      return vscode.window.visibleTextEditors.find((e) => e.document === l.document) ?? l;
    }
    return undefined;
  }

  // ---- commands ----

  register(): void {
    const reg = (id: string, f: (...args: any[]) => Promise<unknown>) =>
      this.ext.subscriptions.push(
        vscode.commands.registerCommand(id, async (...args: any[]) => {
          try {
            await f(...args);
          } catch (e) {
            // No usable provider (Compact Session, Regenerate Title, …): the one message for it.
            if (errorKind(e) === ErrorKinds.noProvider) this.showNoProvider();
            else vscode.window.showErrorMessage(`ctxls: ${errorText(e)}`);
          }
        }),
      );
    const withClient = (id: string, f: (c: CtxlsClient, ...args: any[]) => Promise<unknown>) =>
      reg(id, async (...args) => {
        const c = await this.need();
        if (c) await f(c, ...args);
      });

    reg("ctxls.ui.openSetting", async () => this.openSetting());
    // The key is kept in SecretStorage, so these work without a running daemon.
    reg("ctxls.ui.setApiKey", async () => this.setApiKey());
    reg("ctxls.ui.clearApiKey", async () => this.clearApiKey());
    reg("ctxls.ui.restartDaemon", async () => this.restart());
    withClient("ctxls.ui.ask", async () => {
      const f = this.turnFile();
      const what = f && !f.removed ? `${f.label} and the context's files go with it` : "the context's files go with it";
      const message = await vscode.window.showInputBox({ prompt: "Ask ctxls", placeHolder: `Your question (${what})` });
      if (message) await this.ask(message);
    });
    withClient("ctxls.ui.askSelection", async () => {
      const editor = this.currentEditor();
      if (!editor || editor.selection.isEmpty) {
        vscode.window.showInformationMessage("ctxls: select the lines to ask about in an editor first, then run Ask about Selection.");
        return;
      }
      // The selection is the chip above the chat's input (main.go:5-8): the
      // question typed there goes with the file and those lines.
      this.removedDoc = undefined;
      if (editor !== vscode.window.activeTextEditor) await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, selection: editor.selection, preserveFocus: false });
      this.state.turnFile = this.turnFile() ?? turnFileChip(editor.document.uri.fsPath, selectedLines(editor.selection.start, editor.selection.end));
      this.view.postTurnFile(this.state.turnFile);
      await this.view.reveal(true);
    });
    withClient("ctxls.ui.newSession", async (c) => {
      const { session } = await c.newSession();
      this.resetView();
      this.setSession(session);
      this.view.postState();
    });
    withClient("ctxls.ui.resumeSession", async (c) => {
      const pick = await this.pickSession(c, "resume");
      if (!pick) return;
      // Loaded here, with the hit: the resume notification only updates the context.
      this.state.sessionId = pick.id;
      await c.resume(pick.id);
      await this.loadSession(pick.id, pick.messageId);
      await this.view.reveal(false);
    });
    withClient("ctxls.ui.searchSessions", async (c) => {
      const pick = await this.pickSession(c, "search");
      if (!pick) return;
      // Loaded here, with the hit: the resume notification only updates the context.
      this.state.sessionId = pick.id;
      await c.resume(pick.id);
      await this.loadSession(pick.id, pick.messageId);
      await this.view.reveal(false);
    });
    withClient("ctxls.ui.renameSession", async (c) => {
      const t = await vscode.window.showInputBox({ prompt: "New session title", value: this.state.title });
      if (!t) return;
      const { session } = await c.rename(t);
      this.setSession(session);
      this.view.postState();
    });
    withClient("ctxls.ui.regenerateTitle", async (c) => {
      const { session } = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "ctxls: asking the model for a title" }, () => c.regenerateTitle());
      this.setSession(session);
      this.view.postState();
      vscode.window.showInformationMessage(`ctxls: the session is now called “${session.title}”.`);
    });
    withClient("ctxls.ui.compactSession", async (c) => {
      if (!this.state.sessionId) {
        vscode.window.showInformationMessage("ctxls: there is no session to compact yet: ask something first.");
        return;
      }
      if (this.state.busy) {
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
      await this.loadSession(this.state.sessionId);
      // Counted in questions, as people count a conversation.
      const n = r.summary.summaryOf?.questions ?? 0;
      vscode.window.showInformationMessage(`ctxls: ${n === 1 ? "the first question and its answer are" : `the first ${n} questions and their answers are`} summarised for the model; every message is kept.`);
    });
    withClient("ctxls.ui.clearTitle", async (c) => {
      const { session } = await c.clearTitle();
      this.setSession(session);
      this.view.postState();
      vscode.window.showInformationMessage(`ctxls: the title is automatic again: “${session.title}”.`);
    });
    withClient("ctxls.ui.deleteSession", async (c) => {
      const pick = await this.pickSession(c, "delete");
      if (!pick) return;
      if ((await vscode.window.showWarningMessage(`Delete the session “${pick.label}”? Its messages, context and folder are removed.`, { modal: true }, "Delete")) !== "Delete") return;
      await c.remove(pick.id);
      let switched = "";
      if (pick.id === this.state.sessionId) {
        // The most recent remaining session with a question in it, else a new one.
        const { sessions } = await c.list();
        const next = (sessions ?? []).find((s) => s.id !== pick.id && (s.questions ?? 0) > 0);
        this.resetView();
        if (next) {
          this.state.sessionId = next.id;
          await c.resume(next.id);
          await this.loadSession(next.id);
          switched = ` Now in “${next.title}”.`;
        } else {
          this.setSession(undefined);
          this.view.postState();
        }
      }
      vscode.window.showInformationMessage(`ctxls: deleted “${pick.label}”.${switched}`);
    });
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
      await this.view.reveal(false);
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
      this.state.context = contextSets(context ?? {});
      this.setInstructions(instructions, context?.files);
      this.state.sessionFiles = await this.sessionFiles();
      this.state.revealContext = Date.now();
      await this.view.reveal(false);
      this.view.postState();
    });
    withClient("ctxls.ui.addFileToSession", async (c, arg?: vscode.Uri) => {
      const uris = arg instanceof vscode.Uri ? [arg] : await vscode.window.showOpenDialog({ canSelectMany: true, openLabel: "Add to Session" });
      if (!uris?.length) return;
      const added: string[] = [];
      for (const u of uris) {
        const r = await c.addToSession(u.fsPath);
        added.push(`${r.name} (${r.size} bytes)`);
      }
      if (!this.state.sessionId) await this.adoptSession();
      this.state.sessionFiles = await this.sessionFiles();
      this.view.postState();
      vscode.window.showInformationMessage(`ctxls: copied ${added.join(", ")} into the session's sources/ folder.`);
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
    withClient("ctxls.ui.previewPrompt", async (c) => this.previewPrompt(c, await this.view.draft()));
    withClient("ctxls.ui.setReviewMode", async (c, arg?: unknown) => {
      let mode = reviewModes.find((m) => m.mode === arg)?.mode;
      if (!mode) {
        const pick = await vscode.window.showQuickPick(
          reviewModes.map((m) => ({ label: m.label, description: m.mode === this.state.reviewMode ? "current" : undefined, detail: m.detail, mode: m.mode })),
          { placeHolder: `How the model's edits are reviewed in this session (now: ${this.state.reviewMode})` },
        );
        if (!pick) return;
        mode = pick.mode;
      }
      const { session } = await c.setReviewMode(mode, this.state.sessionId);
      this.setSession(session);
      this.view.postState();
      vscode.window.setStatusBarMessage(`ctxls: edit review mode ${this.state.reviewMode}`, 4000);
    });
    const decide = (d: Decision) => async (arg?: unknown) => {
      if (!this.reviews.decide(arg, d)) vscode.window.showInformationMessage("ctxls: there is no proposed edit to review.");
    };
    reg("ctxls.ui.acceptEdit", decide("accept"));
    reg("ctxls.ui.acceptAllEdits", decide("acceptAll"));
    reg("ctxls.ui.rejectEdit", decide("reject"));
    reg("ctxls.ui.cancel", async () => this.cancel());
    reg("ctxls.ui.undo", async () => {
      await this.view.reveal(false);
      await this.undoChanges();
    });
    reg("ctxls.ui.redo", async () => {
      await this.view.reveal(false);
      await this.redoChanges();
    });
    reg("ctxls.ui.focusChat", async () => this.view.reveal(true));
    withClient("ctxls.ui.chooseModel", async (c) => this.chooseModel(c));
    // The context menus' entries (their titles name ctxls; the palette has the commands above).
    reg("ctxls.ui.menu.addFileToSession", async (arg?: vscode.Uri) => vscode.commands.executeCommand("ctxls.ui.addFileToSession", arg));
    reg("ctxls.ui.menu.addCurrentFile", async (arg?: vscode.Uri) => vscode.commands.executeCommand("ctxls.ui.addCurrentFile", arg));
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
        base = (sessions ?? []).map((s) => ({ ...sessionRow(s, s.id === this.state.sessionId, now), id: s.id }));
        if (mode !== "search" && !qp.value.trim()) qp.items = base;
      } finally {
        qp.busy = false;
      }
    });
  }
}

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new Controller(context);
  controller.register();
  await controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
}
