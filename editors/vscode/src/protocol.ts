// The ctxls protocol for editor clients, with no dependency on the vscode
// module: typed commands, chat streaming assembled from $/progress, and the
// server's notifications. The extension uses it over vscode-languageclient;
// the tests use it over vscode-jsonrpc against the real binary.

import {
  ChatResult,
  ChatUsage,
  ClientNotifications,
  CommandTypes,
  Commands,
  ContextChangedParams,
  DiagnosticsParams,
  DidChangeViewParams,
  ErrorKind,
  ErrorKinds,
  FileDiagnostics,
  InstructionFile,
  Notifications,
  QuestionClosedParams,
  QuestionParams,
  Requests,
  ReviewEditParams,
  ReviewEditResult,
  ReviewMode,
  ServerRequests,
  SessionFilesChangedParams,
  SessionUpdatedParams,
  Span,
  ToolCallParams,
  ToolStatus as DaemonToolStatus,
} from "./generated/protocol";
import { isSearch, searchSummary } from "./search";

// Every name and type of the protocol comes from the module generated from
// package api (go test ./api -update); nothing here repeats them.
export * from "./generated/protocol";

/** A disposable registration. */
export interface Disposable {
  dispose(): void;
}

/**
 * The part of a JSON-RPC connection this module needs: vscode-jsonrpc's
 * MessageConnection and vscode-languageclient's LanguageClient both fit.
 * $/progress is taken per token with onProgress (never onNotification, which
 * would replace the library's own progress dispatch).
 */
export interface Connection {
  sendRequest(method: string, params?: unknown): Promise<any>;
  sendNotification(method: string, params?: unknown): Promise<void> | void;
  onNotification(method: string, handler: (params: any) => void): unknown;
  onProgress(type: any, token: string | number, handler: (value: any) => void): Disposable;
  onRequest(method: string, handler: (params: any, token: any) => any): unknown;
}

// Both libraries ignore the progress type at run time unless a work-done
// middleware is set (the extension sets none).
const progressType = Object.freeze({ __progress: "ctxls" });

/** A tool call's status (the generated bindings name "cancelled" too). */
export type ToolStatus = DaemonToolStatus;

export type Context = Record<string, string[]>;
export type ContextChanged = ContextChangedParams;
export type SessionUpdated = SessionUpdatedParams;

export type SessionFilesChanged = SessionFilesChangedParams;
export type DidChangeView = DidChangeViewParams;
export type ToolCallUpdate = ToolCallParams;

/** Streaming callbacks of one chat turn. */
export interface TurnEvents {
  onDelta?(text: string): void;
  onActivity?(message: string): void;
  /** What the turn's provider requests cost, once they ended (a usage report). */
  onUsage?(usage: ChatUsage): void;
  /** The progress end's message: "done", "cancelled" or "error: …". */
  onEnd?(message: string): void;
}

/**
 * The kind of an error the daemon answered with (its `data.kind`, one of
 * ErrorKinds): clients decide on it, never on the message, which is for people.
 */
export function errorKind(e: any): ErrorKind | undefined {
  return e?.data?.kind;
}

/**
 * Whether a request failed because the connection to the daemon went away
 * (it crashed or was killed while the request waited: vscode-jsonrpc's
 * PendingResponseRejected, -32097, "Pending response rejected since
 * connection got disposed"; or it was sent to a client no longer running:
 * ConnectionInactive, -32096). Those words are the library's, not the user's.
 */
export function disconnected(e: any): boolean {
  return e?.code === -32097 || e?.code === -32096;
}

/** How a turn ended, from its result or its error. */
export interface TurnOutcome {
  /** "stop", "length", "error" or "cancelled". */
  finishReason: string;
  text: string;
  sessionId?: string;
  messageId?: number;
  /** The error's message when finishReason is "error". */
  error?: string;
  /** The error's kind (ErrorKinds), when the daemon answered with one. */
  kind?: ErrorKind;
  /** The daemon went away before it answered (see disconnected). */
  disconnected?: boolean;
  /** The tokens the turn cost, when the provider said (the result's, else the last usage report). */
  usage?: ChatUsage;
  /** The project's instructions files the model was given, when the daemon answered with a result ([] for none). */
  instructions?: InstructionFile[];
}

let tokenSeq = 0;

/** A typed client of one ctxls daemon. */
export class CtxlsClient {
  private contextListeners: ((p: ContextChanged) => void)[] = [];
  private titleListeners: ((p: SessionUpdated) => void)[] = [];
  private filesListeners: ((p: SessionFilesChanged) => void)[] = [];
  private toolListeners: ((p: ToolCallUpdate) => void)[] = [];
  private questionListeners: ((p: QuestionParams) => void)[] = [];
  private questionClosedListeners: ((p: QuestionClosedParams) => void)[] = [];

  /** The running turn's token, for cancel(). */
  current?: string;

  constructor(private conn: Connection) {
    conn.onNotification(Notifications.contextChanged, (p: ContextChanged) => this.contextListeners.forEach((f) => f(p)));
    conn.onNotification(Notifications.sessionUpdated, (p: SessionUpdated) => this.titleListeners.forEach((f) => f(p)));
    conn.onNotification(Notifications.sessionFilesChanged, (p: SessionFilesChanged) => this.filesListeners.forEach((f) => f(p)));
    conn.onNotification(Notifications.toolCall, (p: ToolCallUpdate) => this.toolListeners.forEach((f) => f(p)));
    conn.onNotification(Notifications.question, (p: QuestionParams) => this.questionListeners.forEach((f) => f(p)));
    conn.onNotification(Notifications.questionClosed, (p: QuestionClosedParams) => this.questionClosedListeners.forEach((f) => f(p)));
  }

  /** ctxls/question: the daemon asks the user (sent once initializationOptions.questions is set); answer with answerQuestion. */
  onQuestion(f: (p: QuestionParams) => void): void {
    this.questionListeners.push(f);
  }

  /** ctxls/questionClosed: a question ended (answered here or elsewhere, timed out, cancelled), once per question. */
  onQuestionClosed(f: (p: QuestionClosedParams) => void): void {
    this.questionClosedListeners.push(f);
  }

  /** ctxls.question.answer: answers question id with its action's id. */
  answerQuestion(id: string, action: string) {
    return this.command(Commands.questionAnswer, { id, action });
  }

  onContextChanged(f: (p: ContextChanged) => void): void {
    this.contextListeners.push(f);
  }

  onSessionUpdated(f: (p: SessionUpdated) => void): void {
    this.titleListeners.push(f);
  }

  onSessionFilesChanged(f: (p: SessionFilesChanged) => void): void {
    this.filesListeners.push(f);
  }

  /** ctxls/toolCall: a tool call of the model's began, changed or ended (same id each time). */
  onToolCall(f: (p: ToolCallUpdate) => void): void {
    this.toolListeners.push(f);
  }

  /**
   * ctxls/reviewEdit: the daemon asks to review one of the model's edits
   * (sent once initializationOptions.reviewEdits is set). The handler's
   * decision answers it; the daemon then applies an accepted edit with
   * workspace/applyEdit. The token ends when the daemon stops waiting.
   */
  onReviewEdit(f: (p: ReviewEditParams, token: { onCancellationRequested(l: () => void): unknown }) => Promise<ReviewEditResult>): void {
    this.conn.onRequest(ServerRequests.reviewEdit, f);
  }

  /**
   * ctxls/diagnostics: the daemon asks for the editor's diagnostics, for the
   * model's diagnostics tool (sent once initializationOptions.diagnostics is
   * set). The handler answers with the files' diagnostics; with waitMs, once
   * those changed or waitMs passed. The token ends when the daemon stops waiting.
   */
  onDiagnostics(f: (p: DiagnosticsParams, token: { onCancellationRequested(l: () => void): unknown }) => Promise<FileDiagnostics[]>): void {
    this.conn.onRequest(ServerRequests.diagnostics, f);
  }

  /** Runs a command with its single object argument, typed by the table. */
  command<K extends keyof CommandTypes>(id: K, arg: CommandTypes[K]["args"]): Promise<CommandTypes[K]["result"]> {
    return this.conn.sendRequest("workspace/executeCommand", { command: id, arguments: [arg] });
  }

  /** Runs a chat turn, streaming deltas to events. Rejects only on protocol errors (cancel included). */
  async chat(message: string, events: TurnEvents = {}, opts: { sessionId?: string; files?: string[]; rewind?: number; images?: string[] } = {}): Promise<ChatResult> {
    const token = `ctxls-vscode-${process.pid}-${++tokenSeq}`;
    const sub = this.conn.onProgress(progressType, token, (v: any) => {
      v = v ?? {};
      if (typeof v.delta === "string") events.onDelta?.(v.delta);
      else if (v.kind === "report" && v.usage && typeof v.usage === "object") events.onUsage?.(v.usage);
      else if (v.kind === "report" && v.message) events.onActivity?.(v.message);
      else if (v.kind === "end") events.onEnd?.(v.message ?? "");
    });
    this.current = token;
    try {
      return await this.conn.sendRequest(Requests.chat, { message, workDoneToken: token, ...opts });
    } finally {
      sub.dispose();
      if (this.current === token) this.current = undefined;
    }
  }

  /**
   * Runs a chat turn and folds every ending into a TurnOutcome: a cancelled
   * turn (error -32800) is a normal outcome that keeps the streamed text.
   */
  async turn(message: string, events: TurnEvents = {}, opts: { sessionId?: string; files?: string[]; rewind?: number; images?: string[] } = {}): Promise<TurnOutcome> {
    let streamed = "";
    let endMessage = "";
    let usage: ChatUsage | undefined;
    const wrapped: TurnEvents = {
      onUsage: (u) => {
        usage = u;
        events.onUsage?.(u);
      },
      onDelta: (d) => {
        streamed += d;
        events.onDelta?.(d);
      },
      onActivity: events.onActivity,
      onEnd: (m) => {
        endMessage = m;
        events.onEnd?.(m);
      },
    };
    try {
      const r = await this.chat(message, wrapped, opts);
      const out: TurnOutcome = { finishReason: r.finishReason, text: r.text, sessionId: r.sessionId, messageId: r.messageId, instructions: r.instructions ?? [] };
      if (r.usage && (r.usage.promptTokens || r.usage.completionTokens)) out.usage = r.usage;
      else if (usage) out.usage = usage;
      if (r.finishReason === "error") out.error = endMessage.replace(/^error:\s*/, "") || "the provider failed";
      return out;
    } catch (e: any) {
      if (errorKind(e) === ErrorKinds.cancelled || endMessage === "cancelled") return { finishReason: "cancelled", text: streamed, ...(usage ? { usage } : {}) };
      const kind = errorKind(e);
      return { finishReason: "error", text: streamed, error: e?.message ?? String(e), ...(kind ? { kind } : {}), ...(disconnected(e) ? { disconnected: true } : {}), ...(usage ? { usage } : {}) };
    }
  }

  /** Cancels the running turn: the partial answer is kept by the daemon. */
  async cancel(): Promise<boolean> {
    if (!this.current) return false;
    await this.conn.sendNotification("window/workDoneProgress/cancel", { token: this.current });
    return true;
  }

  /** Tells the daemon what the editor shows (debounce before calling). */
  didChangeView(p: DidChangeView): void {
    this.conn.sendNotification(ClientNotifications.didChangeView, p);
  }

  newSession(title?: string) {
    return this.command(Commands.sessionNew, title ? { title } : {});
  }
  resume(sessionId: string) {
    return this.command(Commands.sessionResume, { sessionId });
  }
  show(sessionId?: string) {
    return this.command(Commands.sessionShow, sessionId ? { sessionId } : {});
  }
  list(query?: string) {
    return this.command(Commands.sessionList, query ? { query } : {});
  }
  search(query: string, limit = 50) {
    return this.command(Commands.sessionSearch, { query, limit });
  }
  rename(title: string, sessionId?: string) {
    return this.command(Commands.sessionRename, sessionId ? { sessionId, title } : { title });
  }
  /** Summarises the session's earlier turns now (every message is kept). */
  /** Sets how the model's edits are reviewed in the session (created on first need). */
  setReviewMode(mode: ReviewMode, sessionId?: string) {
    return this.command(Commands.sessionSetReviewMode, sessionId ? { sessionId, mode } : { mode });
  }
  compact() {
    return this.command(Commands.sessionCompact, {});
  }
  regenerateTitle() {
    return this.command(Commands.sessionRegenerateTitle, {});
  }
  clearTitle() {
    return this.command(Commands.sessionClearTitle, {});
  }
  remove(sessionId: string) {
    return this.command(Commands.sessionDelete, { sessionId });
  }
  exportSession(format: "markdown" | "json" = "markdown") {
    return this.command(Commands.sessionExport, { format });
  }
  preview(message: string, files?: string[]) {
    return this.command(Commands.chatPreview, files?.length ? { message, files } : { message });
  }
  context() {
    return this.command(Commands.contextGet, {});
  }
  candidates() {
    return this.command(Commands.contextCandidates, {});
  }
  addFiles(paths: string[]) {
    return this.command(Commands.contextSet, { setName: "files", items: paths, mode: "merge" });
  }
  /** Removes one item from a context set (the set is replaced without it); "*" removes the whole set. */
  async dropItem(setName: string, item: string) {
    const { context } = await this.context();
    const keep = item === "*" ? [] : (context[setName] ?? []).filter((f) => f !== item);
    return this.command(Commands.contextSet, { setName, items: keep, mode: "replace" });
  }
  dropFile(path: string) {
    return this.dropItem("files", path);
  }
  addToSession(path: string) {
    return this.command(Commands.filesAdd, { path });
  }
  /** The provider's models (its /v1/models), the session's current one and the provider's default. */
  models(sessionId?: string) {
    return this.command(Commands.modelsList, sessionId ? { sessionId } : {});
  }
  /**
   * Sets the model of the session's turns ("" goes back to the provider's);
   * asDefault: every session made from then on starts with it too (kept in
   * the data folder's preferences.json).
   */
  setModel(model: string, sessionId?: string, asDefault = false) {
    return this.command(Commands.sessionSetModel, { ...(sessionId ? { sessionId } : {}), model, ...(asDefault ? { default: true } : {}) });
  }
  /** What the session's turns have cost, in tokens. */
  usage(sessionId?: string) {
    return this.command(Commands.sessionUsage, sessionId ? { sessionId } : {});
  }
}

/** The file name of a path (either separator). */
export function baseName(p: string): string {
  return p.split(/[\\/]/).pop() || p;
}

/**
 * A tool call as the chat shows it: the latest ctxls/toolCall of a running
 * turn, or one rebuilt from a session's stored messages. A stored call has
 * the status "stored": the store keeps what the model got back, not how the
 * call ended.
 */
export interface ShownToolCall {
  id: string;
  /** What the model called: ctxls's own tool, or mcp__SERVER__TOOL. */
  name: string;
  /** The MCP server's name; absent for ctxls's own tools. */
  server?: string;
  tool: string;
  /** The call's arguments, JSON text. */
  arguments: string;
  status: ToolStatus | "stored";
  progress?: string;
  output?: string;
  /** What came of it in a few words ("12 matches in 4 files"): the call's own, or a stored search's read from its result. */
  summary?: string;
}

/** A piece of an answer: text, or a tool call, in the order they came. */
export type ShownPart = { kind: "text"; text: string } | { kind: "tool"; call: ShownToolCall };

/** A turn as the chat view shows it. */
export interface ShownTurn {
  question: string;
  questionId?: number;
  /** The ids of the question and of every message that answered it. */
  ids?: number[];
  /** The answer's text (every round's, joined). */
  answer: string;
  /** The answer's text and tool calls in order. */
  parts: ShownPart[];
  /** "done", "streaming", "cancelled", "error", "length" or "interrupted". */
  status: string;
  error?: string;
  model?: string;
  /** The tokens the turn's answers cost, summed, when the provider said. */
  usage?: ChatUsage;
  /** The newest summary of earlier turns covers this turn and the ones
   *  before it: the model's view of the session starts after it. */
  compacted?: Span;
  /** The newest summary's text (what the model reads instead of the turns it covers). */
  summary?: string;
}

/** The most of a tool's output the view keeps (the daemon sends at most as much). */
export const maxShownOutput = 8000;

/** An MCP tool's name as the model calls it (mcp__SERVER__TOOL) split; ctxls's own tools have no server. */
export function splitToolName(name: string): { server?: string; tool: string } {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m ? { server: m[1], tool: m[2] } : { tool: name };
}

/**
 * The tool calls of a stored assistant message (its toolCalls): the
 * OpenAI shape the daemon stores, [{id, type, function: {name, arguments}}],
 * or the flat [{id, name, arguments}].
 */
export function storedToolCalls(raw: unknown): { id: string; name: string; arguments: string }[] {
  let list = raw;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  const out: { id: string; name: string; arguments: string }[] = [];
  for (const c of list) {
    if (!c || typeof c !== "object") continue;
    const f = (c as any).function ?? c;
    const name = typeof f.name === "string" ? f.name : "";
    if (!name) continue;
    const args = typeof f.arguments === "string" ? f.arguments : f.arguments === undefined ? "" : JSON.stringify(f.arguments);
    out.push({ id: String((c as any).id ?? ""), name, arguments: args });
  }
  return out;
}

function addText(parts: ShownPart[], text: string): void {
  if (!text) return;
  const last = parts[parts.length - 1];
  if (last?.kind === "text") last.text += "\n\n" + text;
  else parts.push({ kind: "text", text });
}

/**
 * Folds a session's stored messages (ctxls.session.show) into question and
 * answer pairs: an answer's text and its tool calls in order (each call with
 * what the model got back), an answer that was cancelled, interrupted or
 * failed keeps its mark.
 */
export function turnsFromMessages(
  messages: { id: number; role: string; content: string; status: string; model?: string; toolCalls?: unknown; toolCallId?: string; summaryOf?: Span; usage?: ChatUsage; files?: string[] }[],
): ShownTurn[] {
  const turns: ShownTurn[] = [];
  let summary: Span | undefined;
  let summaryText = "";
  for (const m of messages) {
    if (m.summaryOf) {
      summary = m.summaryOf; // oldest first: the last one seen is the newest, which stands for the others
      summaryText = m.content;
    }
    if (m.role === "user") {
      turns.push({ question: m.content, questionId: m.id, ids: [m.id], answer: "", parts: [], status: "done" });
      continue;
    }
    if (turns.length === 0) continue;
    const t = turns[turns.length - 1];
    if (m.role === "tool") {
      t.ids!.push(m.id);
      const part = t.parts.find((p) => p.kind === "tool" && p.call.id === m.toolCallId);
      if (part?.kind === "tool") {
        part.call.output = m.content.length > maxShownOutput ? m.content.slice(0, maxShownOutput) + "…" : m.content;
        // The result's status says what became of the call.
        part.call.status = m.status === "declined" ? "declined" : m.status === "cancelled" ? "cancelled" : m.status === "error" ? "failed" : "done";
        // The summary is not stored: a search's is read from its whole result.
        if (part.call.status === "done" && isSearch(part.call)) part.call.summary = searchSummary(part.call.name, m.content);
      }
      continue;
    }
    if (m.role !== "assistant") {
      t.ids!.push(m.id);
      continue;
    }
    t.ids!.push(m.id);
    let content = m.content;
    if (m.status === "error") {
      const i = content.lastIndexOf("Error: ");
      if (i >= 0) {
        t.error = content.slice(i + "Error: ".length).trim();
        content = content.slice(0, i).trimEnd();
      }
    }
    if (content) t.answer += (t.answer ? "\n\n" : "") + content;
    addText(t.parts, content);
    for (const c of storedToolCalls(m.toolCalls)) {
      t.parts.push({ kind: "tool", call: { id: c.id, name: c.name, ...splitToolName(c.name), arguments: c.arguments, status: "stored" } });
    }
    if (m.model) t.model = m.model;
    if (m.usage) {
      const u = (t.usage ??= { promptTokens: 0, completionTokens: 0 });
      u.promptTokens += m.usage.promptTokens || 0;
      u.completionTokens += m.usage.completionTokens || 0;
      if (m.usage.cachedTokens) u.cachedTokens = (u.cachedTokens ?? 0) + m.usage.cachedTokens;
    }
    if (m.status === "cancelled") t.status = "cancelled";
    else if (m.status === "interrupted") t.status = "interrupted";
    else if (m.status === "error") t.status = "error";
    else if (m.status === "streaming") t.status = "streaming";
  }
  if (summary) {
    // The marker goes after the last turn the summary covers (a summary is
    // stored later, after the question of the turn that made it).
    const covered = turns.filter((t) => t.questionId !== undefined && t.questionId <= summary!.last);
    if (covered.length) Object.assign(covered[covered.length - 1], { compacted: summary, summary: summaryText });
  }
  return turns;
}
