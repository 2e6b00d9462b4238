// The VS Code extension: starts `ctxls serve` with vscode-languageclient and
// wires the command palette, the chat webview and the status bar to the
// protocol layer in protocol.ts.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import { renderChat, markdownToHtml, ChatTurn } from "./chatview";
import { CtxlsClient, Context, contextCard } from "./protocol";

let client: LanguageClient | undefined;
let ctxls: CtxlsClient | undefined;
let panel: vscode.WebviewPanel | undefined;
let status: vscode.StatusBarItem;
let title = "ctxls";
const turns: ChatTurn[] = [];
let contextMd = "";

function provider(): Record<string, string> {
  const cfg = vscode.workspace.getConfiguration("ctxls.provider");
  const out: Record<string, string> = {};
  for (const key of ["baseURL", "model", "apiKeyEnv", "titleModel"]) {
    const v = cfg.get<string>(key);
    if (v) out[key] = v;
  }
  return out;
}

function render(): void {
  if (!panel) return;
  // Webviews do not open file:// links: route them through vscode.open.
  const ctx = contextMd
    ? markdownToHtml(contextMd).replace(/href="(file:[^"]+)"/g, (_m, u: string) => `href="command:vscode.open?${encodeURIComponent(JSON.stringify([u]))}"`)
    : "";
  panel.webview.html = renderChat(title, turns, ctx);
}

function showPanel(): void {
  if (!panel) {
    panel = vscode.window.createWebviewPanel("ctxls.chat", "ctxls", vscode.ViewColumn.Beside, { enableScripts: false, enableCommandUris: true });
    panel.onDidDispose(() => (panel = undefined));
  }
  render();
}

function setTitle(t: string): void {
  title = t;
  status.text = `$(comment-discussion) ${t}`;
  render();
}

async function pickSession(placeHolder: string) {
  const { sessions } = await ctxls!.list();
  const item = await vscode.window.showQuickPick(
    sessions.map((s) => ({ label: s.title, description: new Date(s.updatedAt).toLocaleString(), detail: `${s.messageCount} messages, ${s.fileCount} files`, id: s.id })),
    { placeHolder, matchOnDescription: true, matchOnDetail: true },
  );
  return item;
}

async function guarded(f: () => Promise<unknown>): Promise<void> {
  try {
    await f();
  } catch (e: any) {
    vscode.window.showErrorMessage(`ctxls: ${e?.message ?? e}`);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration("ctxls").get<string>("path") || "ctxls";
  const serverOptions: ServerOptions = { command, args: ["serve"] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    initializationOptions: { provider: provider() },
    synchronize: { configurationSection: "ctxls" },
  };
  client = new LanguageClient("ctxls", "ctxls", serverOptions, clientOptions);
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.command = "ctxls.ui.resumeSession";
  status.text = "$(comment-discussion) ctxls";
  status.show();
  context.subscriptions.push(status);
  await client.start();
  ctxls = new CtxlsClient(client as any);
  ctxls.onSessionUpdated((p) => setTitle(p.title));
  ctxls.onContextChanged((p) => {
    contextMd = contextCard(p);
    render();
    vscode.window.showInformationMessage(`ctxls: ${p.reason === "resume" ? "resumed" : "context changed"} (${Object.keys(p.context).join(", ") || "empty"})`);
  });
  const c = ctxls;
  const reg = (id: string, f: () => Promise<unknown>) => context.subscriptions.push(vscode.commands.registerCommand(id, () => guarded(f)));

  reg("ctxls.ui.ask", async () => {
    const message = await vscode.window.showInputBox({ prompt: "Ask ctxls" });
    if (!message) return;
    const turn: ChatTurn = { question: message, answer: "" };
    turns.push(turn);
    showPanel();
    const res = await c.chat(message, {
      onDelta: (d) => {
        turn.answer += d;
        render();
      },
      onActivity: (m) => vscode.window.setStatusBarMessage(`ctxls: ${m}`, 3000),
    });
    turn.answer = res.text;
    if (res.finishReason !== "stop") turn.status = res.finishReason;
    render();
  });
  reg("ctxls.ui.newSession", async () => {
    const { session } = await c.newSession();
    turns.length = 0;
    setTitle(session.title);
  });
  reg("ctxls.ui.resumeSession", async () => {
    const pick = await pickSession("Resume a session (type to search)");
    if (!pick) return;
    const r = await c.resume(pick.id);
    turns.length = 0;
    setTitle(r.session.title);
    showPanel();
  });
  reg("ctxls.ui.renameSession", async () => {
    const t = await vscode.window.showInputBox({ prompt: "New session title", value: title });
    if (t) setTitle((await c.rename(t)).session.title);
  });
  reg("ctxls.ui.deleteSession", async () => {
    const pick = await pickSession("Delete a session");
    if (pick && (await vscode.window.showWarningMessage(`Delete "${pick.label}"?`, { modal: true }, "Delete")) === "Delete") {
      await c.remove(pick.id);
    }
  });
  reg("ctxls.ui.addCurrentFile", async () => {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc?.uri.scheme === "file") await c.addFiles([doc.uri.fsPath]);
  });
  reg("ctxls.ui.removeFile", async () => {
    const { context: ctx } = await c.context();
    const pick = await vscode.window.showQuickPick(ctx.files ?? [], { placeHolder: "Remove from the context" });
    if (pick) await c.dropFile(pick);
  });
  reg("ctxls.ui.showContext", async () => {
    const { context: ctx } = await c.context();
    const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: contextCard({ context: ctx as Context }) });
    await vscode.window.showTextDocument(doc, { preview: true });
  });
  reg("ctxls.ui.addFileToSession", async () => {
    const uris = await vscode.window.showOpenDialog({ canSelectMany: true });
    for (const u of uris ?? []) await c.addToSession(u.fsPath);
  });
  reg("ctxls.ui.exportSession", async () => {
    const { path } = await c.exportSession("markdown");
    await vscode.window.showTextDocument(vscode.Uri.file(path));
  });
  reg("ctxls.ui.cancel", async () => {
    if (!(await c.cancel())) vscode.window.showInformationMessage("ctxls: nothing to cancel");
  });
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
