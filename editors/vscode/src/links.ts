// What the chat links to, opened in the editor through the extension host
// (which works in remote workspaces too): files, a search's matches at their
// line, an answer's links (web pages outside, files inside), and the
// session folder's files.
import * as path from "node:path";
import * as vscode from "vscode";
import type { Controller } from "./extension";
import { resolveResultPath } from "./search";

export class Links {
  constructor(private readonly ctl: Controller) {}

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
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? this.ctl.session?.folder;
      if (!root) return;
      target = path.join(root, decodeURIComponent(target));
    }
    await this.openFile(target, line !== undefined ? new vscode.Range(line, 0, line, 0) : undefined);
  }

  /** A file of the session folder (subdir/name), opened where the folder is now. */
  async openSessionFile(subdir: string, name: string): Promise<void> {
    const c = await this.ctl.daemon.need();
    if (!c) return;
    // The folder is renamed with the title: ask where it is now, and
    // again if it moved between the answer and the opening.
    let file = "";
    for (let tries = 0; tries < 3; tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, 200));
      const { session } = await c.show(this.ctl.state.sessionId);
      if (!session?.folder) return;
      file = path.join(session.folder, subdir, name);
      if (await vscode.workspace.fs.stat(vscode.Uri.file(file)).then(() => true, () => false)) break;
    }
    await this.openFile(file);
  }
}
