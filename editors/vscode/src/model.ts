// The session's model and what it costs: the status bar (ctxls's item, which
// says the daemon's state and the session, and the model's item, whose
// tooltip has the session's token usage), the chat header's model and usage
// line, and Choose Model (the provider's models, for this session or new
// ones too).
import * as vscode from "vscode";
import { provider } from "./config";
import { errorText } from "./daemon";
import type { Controller, Reg, WithClient } from "./extension";
import { CtxlsClient, ErrorKinds, errorKind } from "./protocol";
import { usageLine } from "./viewstate";

export class ModelStatus {
  /** ctxls's item: the daemon's state and the session (click: the setting, Stop, or switch sessions). */
  readonly status: vscode.StatusBarItem;
  /** The session's model (click: Choose Model); its tooltip has the session's token usage. */
  readonly modelStatus: vscode.StatusBarItem;
  /** The provider's default model, once ctxls.models.list has said it. */
  defaultModel?: string;

  constructor(private readonly ctl: Controller) {
    this.status = vscode.window.createStatusBarItem("ctxls.status", vscode.StatusBarAlignment.Left, 100);
    this.status.name = "ctxls";
    this.modelStatus = vscode.window.createStatusBarItem("ctxls.model", vscode.StatusBarAlignment.Left, 99);
    this.modelStatus.name = "ctxls model";
    this.modelStatus.command = "ctxls.ui.chooseModel";
  }

  /** The two items (and the ctxls.busy context) as the daemon, the turn and the session are now. */
  updateStatus(): void {
    const s = this.status;
    if (this.ctl.daemon.startError) {
      s.text = "$(error) ctxls";
      s.tooltip = this.ctl.daemon.startError;
      s.command = "ctxls.ui.openSetting";
    } else if (this.ctl.state.busy) {
      s.text = `$(loading~spin) ${this.ctl.state.title}`;
      s.tooltip = "ctxls is answering. Click to stop.";
      s.command = "ctxls.ui.cancel";
    } else {
      s.text = `$(comment-discussion) ${this.ctl.state.title}`;
      s.tooltip = "ctxls session. Click to switch sessions.";
      s.command = "ctxls.ui.resumeSession";
    }
    void vscode.commands.executeCommand("setContext", "ctxls.busy", this.ctl.state.busy);
    const m = this.modelStatus;
    if (this.ctl.daemon.startError) {
      m.hide();
      return;
    }
    this.ctl.state.model = this.ctl.session?.meta?.model || provider().model || this.defaultModel;
    m.text = `$(sparkle) ${this.ctl.state.model ?? "model"}`;
    m.tooltip =
      `ctxls model: ${this.ctl.state.model ?? "the provider's default"}. Click to choose another.` +
      (this.ctl.state.usage ? `\nThis session: ${this.ctl.state.usage} tokens.` : "");
    m.show();
  }

  /** The model and usage line in the chat's header, and the model's status bar item. */
  postSessionLine(): void {
    this.updateStatus();
    this.ctl.view.postSessionLine(this.ctl.state.model, this.ctl.state.usage);
  }

  /** The provider's default model, for the status bar when neither the session nor the settings name one. */
  async learnDefaultModel(c: CtxlsClient): Promise<void> {
    try {
      const r = await c.models(this.ctl.state.sessionId);
      this.defaultModel = r.default || r.current || undefined;
    } catch {
      // No provider, or one that lists no models: the item says "model".
      this.defaultModel = undefined;
    }
    this.postSessionLine();
  }

  /** What the session's turns cost, asked again after each turn and on a session switch. */
  async refreshUsage(): Promise<void> {
    const c = this.ctl.ctxls;
    const id = this.ctl.state.sessionId;
    if (!c || !id) {
      this.ctl.state.usage = undefined;
      this.postSessionLine();
      return;
    }
    try {
      const u = await c.usage(id);
      if (id !== this.ctl.state.sessionId) return;
      this.ctl.state.usage = usageLine(u);
    } catch {
      this.ctl.state.usage = undefined;
    }
    this.postSessionLine();
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
    let current = this.ctl.state.model ?? "";
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
      const r = await c.models(this.ctl.state.sessionId);
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
        this.ctl.daemon.showNoProvider();
      } else qp.placeholder = `The provider listed no models (${errorText(e)}): type a model's name`;
    } finally {
      qp.busy = false;
    }
    const model = await chosen;
    qp.dispose();
    if (model === undefined) return;
    const scope = await this.pickModelScope(model, fallback);
    if (!scope) return;
    const { session } = await c.setModel(model, this.ctl.state.sessionId, scope === "new");
    if (scope === "new") this.defaultModel = model;
    this.ctl.sessions.setSession(session);
    this.ctl.view.postState();
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

  /** Choose Model (the model item and the chat header's model line run it too). */
  register(reg: Reg, withClient: WithClient): void {
    withClient("ctxls.ui.chooseModel", async (c) => this.chooseModel(c));
  }
}
