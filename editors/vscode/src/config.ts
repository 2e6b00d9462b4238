// The settings as the daemon gets them: the provider (ctxls.provider.*) and
// the variable its key is read from, the daemon's own settings at its start
// (initializationOptions) and on a change (workspace/didChangeConfiguration),
// the MCP servers by origin (settings.ts); and the workspace's folders.
import * as vscode from "vscode";
import { keyEnvName } from "./apikey";
import { InitializationOptions, Provider } from "./protocol";
import { mcpServersByOrigin, Servers } from "./settings";

/** The settings' provider (ctxls.provider.*), as the daemon gets it. */
export function provider(): Provider {
  const cfg = vscode.workspace.getConfiguration("ctxls.provider");
  const out: Provider = {};
  for (const key of ["api", "baseURL", "model", "apiKeyEnv", "titleModel"] as const) {
    const v = cfg.get<string>(key);
    if (v) out[key] = v;
  }
  return out;
}

/** The variable the daemon reads the provider's key from, with the settings as they are now (apikey.ts). */
export function keyEnv(): string {
  return keyEnvName(provider(), process.env);
}

/**
 * The variable the key from SecretStorage goes in: the daemon's key
 * variable, unless a workspace's settings (a repository's) name it with
 * provider.apiKeyEnv: a repository does not choose which variable your key
 * lands in (GITHUB_TOKEN, say, which the daemon refuses as a provider key
 * but an MCP server's env may pass on). Undefined: the key is not given.
 */
export function storedKeyEnv(): string | undefined {
  const v = vscode.workspace.getConfiguration("ctxls.provider").inspect<string>("apiKeyEnv");
  if (v?.workspaceFolderValue || v?.workspaceValue) return undefined;
  return keyEnv();
}

/** The daemon's own settings, when set (the daemon's defaults otherwise). */
export function daemonSettings(): InitializationOptions {
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
export function changedSettings(): Record<string, unknown> {
  const all = vscode.workspace.getConfiguration().get<Record<string, unknown>>("ctxls") ?? {};
  const servers = mcpServers();
  return { ...all, provider: provider(), mcpServers: servers.user ?? null, workspaceMcpServers: servers.workspace ?? null };
}

/** The workspace folders' paths. */
export function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}
