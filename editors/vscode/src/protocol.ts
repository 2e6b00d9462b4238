// The ctxls protocol for editor clients, with no dependency on the vscode
// module: typed commands, chat streaming assembled from $/progress, and the
// server's notifications. The extension uses it over vscode-languageclient;
// the tests use it over vscode-jsonrpc against the real binary.

/** The part of a JSON-RPC connection this module needs. */
export interface Connection {
  sendRequest(method: string, params: unknown): Promise<any>;
  sendNotification(method: string, params: unknown): Promise<void> | void;
  onNotification(method: string, handler: (params: any) => void): unknown;
}

import {
  ChatResult,
  CommandTypes,
  Commands,
  ContextChangedParams,
  Notifications,
  Requests,
  Session,
  SessionUpdatedParams,
} from "./generated/protocol";

// Every name and type of the protocol comes from the module generated from
// lsp/command (go test ./lsp/command -update); nothing here repeats them.
export * from "./generated/protocol";

export type Context = Record<string, string[]>;
export type ContextChanged = ContextChangedParams;
export type SessionUpdated = SessionUpdatedParams;

/** Streaming callbacks of one chat turn. */
export interface TurnEvents {
  onDelta?(text: string): void;
  onActivity?(message: string): void;
}

interface Turn {
  events: TurnEvents;
  text: string;
  ended?: string;
}

let tokenSeq = 0;

/** A typed client of one ctxls daemon. */
export class CtxlsClient {
  private turns = new Map<string, Turn>();
  private contextListeners: ((p: ContextChanged) => void)[] = [];
  private titleListeners: ((p: SessionUpdated) => void)[] = [];

  constructor(private conn: Connection) {
    conn.onNotification("$/progress", (p: { token: string | number; value: any }) => this.progress(p));
    conn.onNotification(Notifications.contextChanged, (p: ContextChanged) => this.contextListeners.forEach((f) => f(p)));
    conn.onNotification(Notifications.sessionUpdated, (p: SessionUpdated) => this.titleListeners.forEach((f) => f(p)));
  }

  onContextChanged(f: (p: ContextChanged) => void): void {
    this.contextListeners.push(f);
  }

  onSessionUpdated(f: (p: SessionUpdated) => void): void {
    this.titleListeners.push(f);
  }

  /** Handles $/progress; returns true when the token was a chat turn's. */
  progress(p: { token: string | number; value: any }): boolean {
    const turn = this.turns.get(String(p.token));
    if (!turn) return false;
    const v = p.value ?? {};
    if (typeof v.delta === "string") {
      turn.text += v.delta;
      turn.events.onDelta?.(v.delta);
    } else if (v.kind === "report" && v.message) {
      turn.events.onActivity?.(v.message);
    } else if (v.kind === "end") {
      turn.ended = v.message;
    }
    return true;
  }

  /** Runs a command with its single object argument, typed by the table. */
  command<K extends keyof CommandTypes>(id: K, arg: CommandTypes[K]["args"]): Promise<CommandTypes[K]["result"]> {
    return this.conn.sendRequest("workspace/executeCommand", { command: id, arguments: [arg] });
  }

  /** The running turn's token, for cancel(). */
  current?: string;

  /** Runs a chat turn, streaming deltas to events. */
  async chat(message: string, events: TurnEvents = {}, opts: { sessionId?: string; files?: string[] } = {}): Promise<ChatResult> {
    const token = `ctxls-vscode-${process.pid}-${++tokenSeq}`;
    this.turns.set(token, { events, text: "" });
    this.current = token;
    try {
      return await this.conn.sendRequest(Requests.chat, { message, workDoneToken: token, ...opts });
    } finally {
      this.turns.delete(token);
      if (this.current === token) this.current = undefined;
    }
  }

  /** Cancels the running turn: the partial answer is kept by the daemon. */
  async cancel(): Promise<boolean> {
    if (!this.current) return false;
    await this.conn.sendNotification("window/workDoneProgress/cancel", { token: this.current });
    return true;
  }

  newSession(title?: string) {
    return this.command(Commands.sessionNew, title ? { title } : {});
  }
  resume(sessionId: string) {
    return this.command(Commands.sessionResume, { sessionId });
  }
  list(query?: string) {
    return this.command(Commands.sessionList, query ? { query } : {});
  }
  rename(title: string, sessionId?: string) {
    return this.command(Commands.sessionRename, sessionId ? { sessionId, title } : { title });
  }
  remove(sessionId: string) {
    return this.command(Commands.sessionDelete, { sessionId });
  }
  exportSession(format: "markdown" | "json" = "markdown") {
    return this.command(Commands.sessionExport, { format });
  }
  context() {
    return this.command(Commands.contextGet, {});
  }
  addFiles(paths: string[]) {
    return this.command(Commands.contextSet, { setName: "files", items: paths, mode: "merge" });
  }
  async dropFile(path: string) {
    const { context } = await this.context();
    const keep = (context.files ?? []).filter((f) => f !== path);
    return this.command(Commands.contextSet, { setName: "files", items: keep, mode: "replace" });
  }
  addToSession(path: string) {
    return this.command(Commands.filesAdd, { path });
  }
}

/** Renders a context card as Markdown with clickable file links. */
export function contextCard(p: { reason?: string; context: Context; missing?: string[] }): string {
  const lines = [p.reason === "resume" ? "**Resumed session context**" : "**Session context**", ""];
  const names = Object.keys(p.context).sort();
  for (const name of names) {
    if (name === "files") {
      lines.push("Files:");
      for (const f of p.context.files) {
        const missing = p.missing?.includes(f) ? " _(not found)_" : "";
        lines.push(`- [${f.split("/").pop()}](${encodeURI("file://" + f)})${missing}`);
      }
    } else {
      lines.push(`${name}: ${p.context[name].join(", ")}`);
    }
  }
  if (names.length === 0) lines.push("_No context yet._");
  return lines.join("\n");
}
