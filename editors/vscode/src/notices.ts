// The daemon's notices (window/showMessage) as VS Code notifications. A
// warning is shown once while the daemon runs (it comes again after a
// restart, or when its words change: another problem in the file), not at
// each turn that meets it. A warning about an MCP configuration ("MCP
// configuration: SOURCE: ...") has a button that opens the file it is
// about: the ctxls mcp.json or a workspace's .mcp.json, or the user's or
// the workspace's settings.json for ctxls.mcpServers.
import * as path from "node:path";
import * as vscode from "vscode";

/** Where an MCP configuration warning points: a file, or the settings that hold ctxls.mcpServers. */
export type ConfigSource = { kind: "file"; path: string } | { kind: "userSettings" } | { kind: "workspaceSettings" };

/**
 * The configuration an MCP warning is about, from the daemon's words
 * (tool/mcp.go: "MCP configuration: " then the source as mcpclient names
 * it: a file's path, "settings" for the settings the editor sent, "the
 * workspace settings of ROOTS" for the workspace's).
 */
export function configSource(message: string): ConfigSource | undefined {
  const m = /^(?:ctxls:\s*)?MCP configuration: (.*)$/s.exec(message);
  if (!m) return undefined;
  const rest = m[1];
  if (rest.startsWith("settings:")) return { kind: "userSettings" };
  if (rest.startsWith("the workspace settings")) return { kind: "workspaceSettings" };
  // A path, up to the ": " that ends it (a Windows drive's "C:\" has no space after its colon).
  const end = rest.indexOf(": ");
  const p = end > 0 ? rest.slice(0, end) : "";
  return path.isAbsolute(p) ? { kind: "file", path: p } : undefined;
}

/** The button's words for a source. */
export function openLabel(s: ConfigSource): string {
  if (s.kind === "file") return `Open ${path.basename(s.path)}`;
  return s.kind === "userSettings" ? "Open User Settings (JSON)" : "Open Workspace Settings (JSON)";
}

interface ShowMessageParams {
  type: number;
  message: string;
}

export class Notices {
  /** The warnings shown while this daemon runs. */
  private shown = new Set<string>();

  /** A daemon (re)started: its warnings are news again. */
  reset(): void {
    this.shown.clear();
  }

  /** Shows a window/showMessage notice; a warning said already is not said again. */
  show(p: ShowMessageParams): void {
    const message = p.message;
    if (p.type === 2) {
      if (this.shown.has(message)) return;
      this.shown.add(message);
    }
    const source = p.type <= 2 ? configSource(message) : undefined;
    const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    if (!source) {
      void show(message);
      return;
    }
    const label = openLabel(source);
    void show(message, label).then((pick) => pick === label && open(source));
  }
}

async function open(s: ConfigSource): Promise<unknown> {
  if (s.kind === "file") return vscode.window.showTextDocument(vscode.Uri.file(s.path));
  const reveal = { revealSetting: { key: "ctxls.mcpServers" } };
  return vscode.commands.executeCommand(s.kind === "userSettings" ? "workbench.action.openSettingsJson" : "workbench.action.openWorkspaceSettingsFile", reveal);
}
