// Which of the settings come from the user and which from the workspace,
// whose repository controls them (.vscode/settings.json, a .code-workspace
// file). Kept apart from VS Code's API so it can be tested with node --test.

/** A setting's values by where they were set (VS Code's inspect()). */
export interface Inspected<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export type Servers = Record<string, unknown>;

function nonEmpty(v: unknown): v is Servers {
  return !!v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0;
}

/**
 * ctxls.mcpServers split by origin: the user's (settings.json) go to the
 * daemon as mcpServers, which run when a tool call is allowed; the
 * workspace's as workspaceMcpServers, which the daemon uses only once the
 * user trusted them (the question a workspace's .mcp.json gets). In a
 * workspace VS Code has not trusted (Restricted Mode) the workspace's are
 * not sent at all.
 */
export function mcpServersByOrigin(v: Inspected<Servers> | undefined, workspaceTrusted: boolean): { user?: Servers; workspace?: Servers } {
  const out: { user?: Servers; workspace?: Servers } = {};
  if (nonEmpty(v?.globalValue)) out.user = v.globalValue;
  const ws = { ...(nonEmpty(v?.workspaceValue) ? v.workspaceValue : {}), ...(nonEmpty(v?.workspaceFolderValue) ? v.workspaceFolderValue : {}) };
  if (workspaceTrusted && nonEmpty(ws)) out.workspace = ws;
  return out;
}
