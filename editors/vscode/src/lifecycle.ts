// The daemon's life: `ctxls serve` started with vscode-languageclient (the
// binary found from ctxls.path, the key from SecretStorage in its
// environment), the settings sent to it, restarted when its path or key
// changes, and what the user is told when it cannot start or stops.
import * as os from "node:os";
import * as vscode from "vscode";
import { CloseAction, ErrorAction, LanguageClient, LanguageClientOptions, RevealOutputChannelOn, ServerOptions } from "vscode-languageclient/node";
import { apiKeySecret, daemonEnv, keyClearedMessage, keyProblem, keySetMessage, noProviderMessage } from "./apikey";
import { changedSettings, daemonSettings, keyEnv, provider, storedKeyEnv } from "./config";
import { errorText, notCtxls, resolveBinary } from "./daemon";
import type { Controller, Reg, WithClient } from "./extension";
import { Notices } from "./notices";
import { Connection, CtxlsClient, InitializationOptions } from "./protocol";
import { sessionKey } from "./sessions";
import { emptyState } from "./viewstate";

export class Lifecycle {
  /** The daemon's start under way (start): awaited before a command uses the daemon. */
  starting?: Promise<void>;
  /** Why the daemon did not start: the status bar, the banner and every command say it. */
  startError?: string;
  /** The ctxls.path the running daemon was started with (a change of another scope's value restarts nothing). */
  pathInUse?: string;
  /**
   * The API key the running daemon was started with (from SecretStorage,
   * undefined: none) and the variable it went in: a key set, changed or
   * cleared, or another variable for it (the provider's settings changed),
   * restarts the daemon (applyKey).
   */
  keyInUse?: { name: string; key?: string };
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
  /** The daemon's notices: a warning once per daemon run, an MCP configuration's with a button to its file (notices.ts). */
  readonly notices = new Notices();

  constructor(private readonly ctl: Controller) {}

  /** Tells a running daemon the settings now (workspace/didChangeConfiguration). */
  sendSettings(): void {
    const c = this.ctl.client;
    if (!c?.isRunning()) return;
    c.sendNotification("workspace/didChangeConfiguration", { settings: { ctxls: changedSettings() } }).catch(() => {});
  }

  /** Starts the daemon (doStart); starting says a start is under way. */
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
    const keep = <T>(uri: vscode.Uri, next: () => T): T | Promise<void> => (this.ctl.syncable(uri) ? next() : Promise.resolve());
    const clientOptions: LanguageClientOptions = {
      // Only the user's files: middleware drops the editor's own (see sync.ts).
      documentSelector: [{ scheme: "file" }],
      // reviewEdits: the model's edits are reviewed here, in a diff (ctxls/reviewEdit).
      // diagnostics: the model may read VS Code's diagnostics (ctxls/diagnostics, diagnostics.ts).
      // A function: a daemon the client restarts (after a crash) gets the current session and settings.
      initializationOptions: (): InitializationOptions => ({
        provider: provider(),
        session: this.ctl.ext.workspaceState.get<string>(sessionKey),
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
          if (this.ctl.client === client && started) this.daemonStopped();
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
    this.ctl.listen(client, ctxls);
    this.ctl.client = client;
    this.ctl.ctxls = ctxls;
    try {
      await client.start();
      started = true;
      this.startError = undefined;
      this.ctl.state.banner = undefined;
      this.ctl.model.updateStatus();
      this.ctl.view.postState();
      const e = vscode.window.activeTextEditor;
      if (e) this.ctl.context.viewChanged(e);
      void this.ctl.model.learnDefaultModel(ctxls);
      void this.ctl.context.refreshInstructions();
    } catch (e) {
      this.ctl.client = undefined;
      this.ctl.ctxls = undefined;
      client.stop().catch(() => undefined);
      return this.fail(`ctxls: the daemon "${found.path}"${setting ? " (setting ctxls.path)" : ""} did not start: ${errorText(e)}. Check ctxls.path.`);
    }
  }

  private fail(message: string): void {
    this.startError = message;
    this.ctl.state.banner = { text: message, action: { label: "Open Setting", command: "openSetting" } };
    this.ctl.model.updateStatus();
    this.ctl.view.postState();
    void this.showStartError();
  }

  private async showStartError(): Promise<void> {
    const pick = await vscode.window.showErrorMessage(this.startError ?? "ctxls is not running", "Open Setting");
    if (pick === "Open Setting") await this.openSetting();
  }

  /** The provider's settings (ctxls.provider.baseURL, .model, …) in the settings editor. */
  openProviderSettings(): Thenable<unknown> {
    return vscode.commands.executeCommand("workbench.action.openSettings", "ctxls.provider");
  }

  /**
   * Tells the user, once while the notification is open, that no provider
   * is usable (the daemon's kind noProvider), with Set API Key and Open
   * Settings: the one message for it, whatever asked.
   */
  showNoProvider(): void {
    if (this.noProviderOpen) return;
    this.noProviderOpen = true;
    const [set, open] = ["Set API Key", "Open Settings"];
    void vscode.window.showErrorMessage(noProviderMessage(keyEnv()), set, open).then((a) => {
      this.noProviderOpen = false;
      if (a === set) void vscode.commands.executeCommand("ctxls.ui.setApiKey");
      else if (a === open) void this.openProviderSettings();
    });
  }

  /** The one "ctxls" output channel, made on first need and disposed with the extension. */
  private outputChannel(): vscode.OutputChannel {
    if (!this.output) {
      this.output = vscode.window.createOutputChannel("ctxls");
      this.ctl.ext.subscriptions.push(this.output);
    }
    return this.output;
  }

  /** The key from SecretStorage and the variable it goes in for the daemon (no key: none stored, or not to be given). */
  private async keyToGive(): Promise<{ name: string; key?: string }> {
    const key = (await Promise.resolve(this.ctl.ext.secrets.get(apiKeySecret)).catch(() => undefined)) || undefined;
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
    await this.ctl.ext.secrets.store(apiKeySecret, typed.trim());
    await this.applyKey();
    void vscode.window.showInformationMessage(keySetMessage(name, process.env, storedKeyEnv() !== undefined));
  }

  /** Clear API Key: the key leaves SecretStorage, and the daemon restarts without it. */
  private async clearApiKey(): Promise<void> {
    const had = !!(await this.ctl.ext.secrets.get(apiKeySecret));
    if (had) await this.ctl.ext.secrets.delete(apiKeySecret);
    await this.applyKey();
    void vscode.window.showInformationMessage(keyClearedMessage(keyEnv(), process.env, had));
  }

  /**
   * Restarts the daemon when the key it should have is not the one it has:
   * set, changed or cleared in SecretStorage, or due under another variable
   * (the provider's settings changed). One run at a time.
   */
  applyKey(): Promise<void> {
    const run = this.keyChain.then(async () => {
      const want = await this.keyToGive();
      const now = this.keyInUse;
      if (!now || (want.key === now.key && (!want.key || want.name === now.name))) return;
      await this.restart();
    });
    this.keyChain = run.catch(() => undefined);
    return run;
  }

  openSetting(): Thenable<unknown> {
    return vscode.commands.executeCommand("workbench.action.openSettings", "ctxls.path");
  }

  /** Stops the daemon and starts it again, the view emptied (the session is resumed). */
  async restart(): Promise<void> {
    await this.starting;
    const old = this.ctl.client;
    this.ctl.client = undefined;
    this.ctl.ctxls = undefined;
    if (old) await old.stop().catch(() => undefined);
    this.ctl.questions.dropQuestions();
    this.ctl.state = emptyState();
    this.ctl.state.turnFile = this.ctl.context.turnFile();
    this.ctl.session = undefined;
    await this.start();
  }

  /** Starts a daemon that stopped again (the session it had is resumed). */
  async waitForDaemon(): Promise<void> {
    if (this.starting) await this.starting;
    if (!this.ctl.client?.isRunning()) await this.restart();
  }

  /**
   * The daemon exited while it ran (a crash, a kill): said in the view and
   * the status bar, not in the language client's notifications; the next
   * question (or Restart) starts it again.
   */
  private daemonStopped(): void {
    this.ctl.questions.dropQuestions();
    this.ctl.state.banner = { text: "The ctxls daemon stopped. It starts again when you send a question, or now with Restart; the ctxls output channel may say why.", action: { label: "Restart", command: "restartDaemon" } };
    this.ctl.model.status.text = "$(error) ctxls stopped";
    this.ctl.model.status.tooltip = "The ctxls daemon stopped. Send a question or click to start it again.";
    this.ctl.model.status.command = "ctxls.ui.restartDaemon";
    this.ctl.view.postState();
  }

  /** The running daemon's client, or undefined after telling the user why not. */
  async need(): Promise<CtxlsClient | undefined> {
    if (this.starting) await this.starting;
    if (this.ctl.ctxls && this.ctl.client?.isRunning()) return this.ctl.ctxls;
    if (this.startError) void this.showStartError();
    else vscode.window.showErrorMessage("ctxls: the daemon is not running; see the ctxls output channel.");
    return undefined;
  }

  async stop(): Promise<void> {
    await this.ctl.client?.stop();
  }

  /** The commands that work without a running daemon: its setting, its key, its restart. */
  register(reg: Reg, withClient: WithClient): void {
    reg("ctxls.ui.openSetting", async () => this.openSetting());
    // The key is kept in SecretStorage, so these work without a running daemon.
    reg("ctxls.ui.setApiKey", async () => this.setApiKey());
    reg("ctxls.ui.clearApiKey", async () => this.clearApiKey());
    reg("ctxls.ui.restartDaemon", async () => this.restart());
  }
}
