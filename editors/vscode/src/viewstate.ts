// What the chat view shows, with no dependency on vscode: the extension keeps
// one ViewState and sends it (or one turn of it) to the webview, which only
// draws. The node tests check the folding rules here.
import { baseName, ChatUsage, Context, InstructionFile, maxShownOutput, ReviewMode, ShownPart, ShownToolCall, ShownTurn, Span, splitToolName, ToolCallUpdate, ToolStatus } from "./protocol";
import { escapeHtml, renderMarkdown } from "./markdown";
import type { MentionedFile } from "./mentions";
import { isSearch, resultLines, ResultLine, searchArgsInLabel, searchLabel } from "./search";

/** A file the model (or the user) put into the session folder. */
export interface SessionFile {
  subdir: string;
  name: string;
  by?: string;
}

/** One turn as the webview draws it. */
export interface ViewTurn {
  question: string;
  questionId?: number;
  /** The stored messages of the turn (a search hit names one of them). */
  ids?: number[];
  /** The answer: its text as HTML (markdown-it, HTML disabled) and its tool calls, in order. */
  parts: ViewPart[];
  /** "streaming", "done", "cancelled", "interrupted", "error" or "length". */
  status: string;
  error?: string;
  activity?: string;
  files: SessionFile[];
  /** What the question went with, listed under it: the turn's file and the files it mentions (@path). */
  withFiles?: MentionedFile[];
  /** The newest summary ends with this turn: a marker follows it. */
  compacted?: Span;
  /** The summary's text, shown under the marker on a click. */
  summary?: string;
  /** What the turn cost, as a line under the answer: "1,234 in (1,000 cached) · 56 out". */
  usage?: string;
  /**
   * Once its file changes were undone or redone here (ctxls.session.undo,
   * redo): whether they are undone now (its button says Redo), and the
   * note under the turn that says what came of it.
   */
  undo?: TurnUndo;
  /** A question on the turn, with its answers (asking again: also undo the file changes of the turns taken back?). */
  undoAsk?: AskCard;
}

/** A turn's file changes undone or redone, as the view shows it. */
export interface TurnUndo {
  undone: boolean;
  /** "Undid changes to 2 files · left: c.go (it changed since the turn)". */
  note?: string;
  /** The note is a failure ("nothing to undo: …"). */
  failed?: boolean;
}

export interface ContextItem {
  label: string;
  value: string;
  /** Set for files: clicking opens it. */
  path?: string;
  missing?: boolean;
}

export interface ContextSet {
  name: string;
  items: ContextItem[];
}

export interface Banner {
  text: string;
  /** A button: its label and the message it posts back. */
  action?: { label: string; command: string };
  /** Buttons, in this order, in place of action. */
  actions?: { label: string; command: string }[];
  /** "provider": a question refused for want of a provider; the next question takes it away. */
  kind?: "provider";
}

export interface ViewState {
  title: string;
  sessionId?: string;
  /** How the model's edits are reviewed in the session (its meta.reviewMode; ask by default). */
  reviewMode: ReviewMode;
  busy: boolean;
  turns: ViewTurn[];
  context: ContextSet[];
  sessionFiles: SessionFile[];
  /** The project's instructions files the model gets with each turn (AGENTS.md, …): a row of chips in the header. */
  instructions?: InstructionChip[];
  banner?: Banner;
  /** A message id to scroll to (once) and mark (a search hit), until the next question. */
  highlight?: number;
  /** Bumped to make the view scroll the context card into sight. */
  revealContext?: number;
  /** The file that goes with the next question (the active editor's), shown as a chip above the input. */
  turnFile?: TurnFileChip;
  /** The model the session's next turn uses, when known. */
  model?: string;
  /** What the session's turns have cost in all, as a line in the header. */
  usage?: string;
}

/**
 * The active editor's file as the chip above the chat input. `item` is
 * what goes in the turn's files: the path, with the selected lines
 * ("/w/main.go:5-8"); `label` is what the chip says ("main.go:5-8").
 * A chip the user removed stays shown, dashed, as `removed`: a click puts
 * it back.
 */
export interface TurnFileChip {
  item: string;
  label: string;
  path: string;
  removed?: boolean;
}

export function emptyState(title = "New session"): ViewState {
  return { title, reviewMode: "ask", busy: false, turns: [], context: [], sessionFiles: [] };
}

/** 1-based lines of a selection; one that ends at character 0 of a later line ends on the line before. */
export function selectedLines(start: { line: number; character: number }, end: { line: number; character: number }): [number, number] {
  const first = start.line + 1;
  const last = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
  return [first, Math.max(first, last)];
}

/** The chip of a file with its selected lines, if any: main.go, main.go:5, main.go:5-8. */
export function turnFileChip(path: string, lines?: [number, number]): TurnFileChip {
  const range = lines ? (lines[0] === lines[1] ? `:${lines[0]}` : `:${lines[0]}-${lines[1]}`) : "";
  return { item: path + range, label: baseName(path) + range, path };
}

const count = (n: number) => n.toLocaleString("en-US");

/** Token usage as people read it: "1,234 in (1,000 cached) · 56 out"; undefined when nothing was reported. */
export function usageLine(u: { promptTokens?: number; completionTokens?: number; cachedTokens?: number } | undefined): string | undefined {
  if (!u || (!u.promptTokens && !u.completionTokens)) return undefined;
  const cached = u.cachedTokens ? ` (${count(u.cachedTokens)} cached)` : "";
  return `${count(u.promptTokens ?? 0)} in${cached} · ${count(u.completionTokens ?? 0)} out`;
}

/** The value that stands for a whole set (the applet is removed as one). */
export const wholeSet = "*";

/**
 * The applet set (["editor", "file=/a/b.go", "line=42", "selection=42-49"])
 * as one item: "editor b.go:42–49", the file clickable.
 */
function appletItem(items: string[]): ContextItem {
  const [slug, ...rest] = items;
  const params: Record<string, string> = {};
  for (const kv of rest) {
    const i = kv.indexOf("=");
    if (i > 0) params[kv.slice(0, i)] = kv.slice(i + 1);
  }
  let label = slug ?? "applet";
  if (params.file) {
    const lines = params.selection ? params.selection.replace("-", "–") : params.line;
    label += ` ${baseName(params.file)}${lines ? ":" + lines : ""}`;
  } else if (rest.length) label += ` (${rest.join(", ")})`;
  return { label, value: wholeSet, path: params.file };
}

/** The context sets as the view lists them: files first, then the others by name. */
export function contextSets(context: Context, missing: string[] = []): ContextSet[] {
  const names = Object.keys(context).filter((n) => (context[n] ?? []).length > 0);
  names.sort((a, b) => (a === "files" ? -1 : b === "files" ? 1 : a.localeCompare(b)));
  return names.map((name) => ({
    name,
    items:
      name === "applet"
        ? [appletItem(context[name])]
        : context[name].map((v) => (name === "files" ? { label: baseName(v), value: v, path: v, missing: missing.includes(v) } : { label: v, value: v })),
  }));
}

/** A project instructions file (AGENTS.md, CLAUDE.md, …) as its chip in the chat's header. */
export interface InstructionChip {
  /** Its path in the workspace: "AGENTS.md", "pkg/AGENTS.md". */
  label: string;
  /** Its full path: a click opens it. */
  path: string;
  /** The tooltip: that the model gets it with every turn, and whether it was cut or is the editor's unsaved text. */
  title: string;
}

/**
 * The instructions files the daemon listed (ctxls.context.get, a turn's
 * result) as chips, labelled by their workspace paths (relative: VS Code's
 * asRelativePath; the node tests pass their own).
 */
export function instructionChips(files: InstructionFile[] | undefined, relative: (p: string) => string): InstructionChip[] {
  return (files ?? []).map((f) => {
    const label = relative(f.path);
    const lines = [`${label} goes to the model at the start of every turn (the project's instructions, at the end of the system prompt): ${count(f.bytes)} bytes.`];
    if (f.unsaved) lines.push("unsaved: the editor's text is given, with any edits not yet saved.");
    if (f.cut) lines.push(f.cut);
    lines.push("Click to open it.");
    return { label, path: f.path, title: lines.join("\n") };
  });
}

/** A tool call as the view draws it: a card, collapsed to one line. */
export interface ToolCard {
  id: string;
  /** "server · tool", or the name of ctxls's own tool. */
  title: string;
  /** The arguments in one line, shortened. */
  args: string;
  /** The arguments in full, indented when they are JSON. */
  argsFull: string;
  /** The line says the arguments in full (a search's pattern, path and glob): the opened card shows only the result. */
  argsInLine?: boolean;
  status: ToolStatus | "stored";
  /** The status in a word or two, at the end of the card's line: "running", "done", the server's progress… */
  statusText: string;
  /** A line under it while the call waits: "waiting for your permission". */
  note?: string;
  /** What the model got back, once the call ended. */
  output?: string;
  /** A search's output as lines to follow (a match opens its file at its line); the view shows them in place of output. */
  results?: ResultLine[];
  /** While the permission question is open: its answers (the request's action titles). */
  actions?: string[];
  /** Of actions, those that take a deliberate act (a second, confirming click): "Always in this session". */
  deliberate?: string[];
  /** Once the question was closed: what came of it ("Allow once", "no answer in time"). */
  outcome?: string;
  /** While the question is open: the daemon's question in full (server, tool, arguments, read-only or not). */
  question?: string;
  /** The plan an update_plan call set: shown under the card's line, always (not folded into it). */
  plan?: PlanItem[];
  /**
   * A command's output (run_command), shown under the card's line, not
   * folded into it: the output so far while it runs, then all of it
   * without the "[exit status N]" line (the status says how it ended).
   * The opened card shows no Result beside it.
   */
  shell?: string;
  /** The file an edit_file or create_file call changes (its path as the model gave it). */
  file?: string;
}

/** The command line of ctxls's own run_command call and the folder it names, if any. */
export function commandOf(c: Pick<ShownToolCall, "server" | "name" | "tool" | "arguments">): { line: string; cwd?: string } | undefined {
  if (c.server || (c.tool || c.name) !== "run_command") return undefined;
  try {
    const v = JSON.parse(c.arguments);
    if (!v || typeof v.command !== "string") return undefined;
    return { line: v.command, ...(typeof v.cwd === "string" && v.cwd ? { cwd: v.cwd } : {}) };
  } catch {
    return undefined;
  }
}

/** How a command ended, from its summary or the last line of its output ("[exit status 3]"), if either says. */
function commandEnd(c: Pick<ShownToolCall, "summary" | "output">): string | undefined {
  if (c.summary) return c.summary.replace(/\s+/g, " ");
  const last = (c.output ?? "").trimEnd().split("\n").pop() ?? "";
  const m = /^\[exit status (\d+)\]$/.exec(last);
  if (m) return `exit status ${m[1]}`;
  if (/^\[killed by [^\]]+\]$/.test(last)) return last.slice(1, -1);
  if (last.startsWith("[the command timed out")) return "timed out";
  return undefined;
}

/** An item of the model's plan (update_plan's arguments). */
export interface PlanItem {
  content: string;
  /** pending, in_progress or completed. */
  status: string;
  /** high, medium or low. */
  priority?: string;
}

/** The plan the call set, if it is ctxls's own update_plan and its arguments are a plan. */
export function planItems(c: ShownToolCall): PlanItem[] | undefined {
  if (c.server || (c.tool || c.name) !== "update_plan") return undefined;
  try {
    const v = JSON.parse(c.arguments);
    if (!v || !Array.isArray(v.items)) return undefined;
    return v.items.map((it: { content?: unknown; status?: unknown; priority?: unknown }) => ({
      content: String(it?.content ?? ""),
      status: String(it?.status ?? "pending"),
      priority: typeof it?.priority === "string" ? it.priority : undefined,
    }));
  } catch {
    return undefined;
  }
}

/** A question with a card of its own (a workspace's MCP servers to trust), not a tool call's. */
export interface AskCard {
  /** The question's id (ctxls/question). */
  id: string;
  message: string;
  actions?: string[];
  deliberate?: string[];
  outcome?: string;
}

/** A piece of an answer: Markdown as HTML, a tool call's card, or a question's own card. */
export type ViewPart = { kind: "text"; html: string } | { kind: "tool"; card: ToolCard } | { kind: "ask"; card: AskCard };

/** The most of the arguments the collapsed card shows. */
export const shortArgumentsMax = 120;

/**
 * The arguments in one line: a JSON object as `key: value, …` (values as
 * JSON), anything else as its text with its white space folded; at most max
 * characters, then "…".
 */
export function shortArguments(json: string, max = shortArgumentsMax): string {
  let text = json.replace(/\s+/g, " ").trim();
  try {
    const v = JSON.parse(json);
    if (v && typeof v === "object" && !Array.isArray(v)) {
      text = Object.entries(v)
        .map(([k, x]) => `${k}: ${JSON.stringify(x)}`)
        .join(", ");
    } else if (v !== undefined) {
      text = JSON.stringify(v);
    }
  } catch {
    // not JSON (or cut at the daemon's limit): shown as it is
  }
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/** The arguments in full: JSON indented, anything else as it is. */
export function prettyArguments(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

/** What a card's line says of its status. */
export function toolStatusText(status: ToolStatus | "stored", progress?: string): string {
  switch (status) {
    case "pending":
      return "waiting";
    case "running":
      return progress ? `running: ${progress}` : "running";
    case "stored":
      return "";
    default:
      return status; // done, failed, declined
  }
}

/** ctxls's own tools that edit the user's files: their question is a review of the edit. */
export function isEditTool(name: string): boolean {
  return name === "edit_file" || name === "create_file";
}

/** Whether the turn changed files: a card of edit_file or create_file that is done (applied). */
export function turnChangedFiles(t: Pick<ViewTurn, "parts">): boolean {
  return t.parts.some((p) => p.kind === "tool" && isEditTool(p.card.title) && p.card.status === "done");
}

/** The files the turn's applied edits changed (edit_file and create_file cards done), by base name, each once. */
export function turnChangedFileNames(t: Pick<ViewTurn, "parts">): string[] {
  const names: string[] = [];
  for (const p of t.parts) {
    if (p.kind !== "tool" || !isEditTool(p.card.title) || p.card.status !== "done" || !p.card.file) continue;
    const name = baseName(p.card.file);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * What asking a question again (Retry, Regenerate, Edit) asks about the
 * file changes of the turns it takes back, naming the files: "Also undo the
 * changes to calc.ts made by the turn taken back?". Undefined when none of
 * them changed files (or their changes are undone already).
 */
export function rewindUndoQuestion(turns: Pick<ViewTurn, "parts" | "undo">[]): string | undefined {
  const changed = turns.filter((t) => turnChangedFiles(t) && !t.undo?.undone);
  if (changed.length === 0) return undefined;
  const names: string[] = [];
  for (const t of changed) for (const n of turnChangedFileNames(t)) if (!names.includes(n)) names.push(n);
  const shown = names.length > 3 ? [...names.slice(0, 2), plural(names.length - 2, "more file")] : names;
  const files = shown.length === 0 ? "the files" : shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
  const by = changed.length === 1 ? "the turn taken back" : `the ${changed.length} turns taken back`;
  return `Also undo the changes to ${files} made by ${by}?`;
}

/**
 * What an undo or redo did, as the note under its turn says it: "Undid
 * changes to 2 files · left: c.go (it changed since the turn)".
 */
export function undoNote(r: { restored?: string[] | null; left?: { path: string; reason: string }[] | null }, redo: boolean): string {
  const restored = r.restored ?? [];
  const left = r.left ?? [];
  const verb = redo ? "Redid" : "Undid";
  const head = restored.length
    ? `${verb} changes to ${restored.length === 1 ? baseName(restored[0]) : plural(restored.length, "file")}`
    : `${verb} no change`;
  const tail = left.length ? ` · left: ${left.map((f) => `${baseName(f.path)} (${f.reason})`).join(", ")}` : "";
  return head + tail;
}

/** The answers to an edit's review, on its card (the diff editor has the same as buttons). */
export const ReviewAnswers = { accept: "Accept", acceptAll: "Accept all in this turn", reject: "Reject" } as const;

/** An answer's title as the review's decision; anything else (none) rejects. */
export function reviewDecision(title: string | undefined): "accept" | "acceptAll" | "reject" {
  return title === ReviewAnswers.accept ? "accept" : title === ReviewAnswers.acceptAll ? "acceptAll" : "reject";
}

/**
 * A call's card. A call that ended saying what came of it (its summary)
 * shows that in place of "done"; a search names what it looked for in
 * place of its arguments ("grep loginRedirect · 12 matches in 4 files"),
 * and its results are lines to follow.
 */
export function toolCard(c: ShownToolCall, actions?: string[], ask?: { deliberate?: string[]; outcome?: string; message?: string }): ToolCard {
  const search = isSearch(c);
  const card: ToolCard = {
    id: c.id,
    title: c.server ? `${c.server} · ${c.tool}` : c.tool || c.name,
    args: search ? searchLabel(c.name, c.arguments) : shortArguments(c.arguments),
    argsFull: prettyArguments(c.arguments),
    status: c.status,
    statusText: c.status === "done" && c.summary ? c.summary : toolStatusText(c.status, c.progress),
  };
  const plan = c.status === "done" || c.status === "stored" ? planItems(c) : undefined;
  if (plan) {
    // The plan, not its JSON: "plan · 1 of 3 done", then its items.
    card.title = "plan";
    card.args = "";
    card.statusText = `${plan.filter((it) => it.status === "completed").length} of ${plan.length} done`;
    card.plan = plan;
  }
  const command = commandOf(c);
  if (command) {
    // "run printf … — failed: exit status 3", the output under the line.
    card.title = "run";
    card.args = command.line.replace(/\s+/g, " ").trim();
    if (card.args.length > shortArgumentsMax) card.args = card.args.slice(0, shortArgumentsMax - 1) + "…";
    if (command.cwd) card.args += ` in ${command.cwd}`;
    const end = commandEnd(c);
    if (c.status === "running") card.statusText = "running";
    else if (c.status === "done" || c.status === "stored") card.statusText = end ?? toolStatusText(c.status);
    else if (c.status === "failed") card.statusText = end ? `failed: ${end}` : "failed";
    if (c.status === "running") {
      if (c.progress) card.shell = c.progress.replace(/\n$/, "");
    } else if (c.status !== "pending" && c.status !== "declined" && c.output !== undefined) {
      card.shell = c.output.replace(/\n?\[exit status \d+\]\s*$/, "");
    }
  }
  if (isEditTool(c.name) && !c.server) {
    try {
      const path = JSON.parse(c.arguments)?.path;
      if (typeof path === "string" && path) card.file = path;
    } catch {
      // arguments cut or not JSON: no file named
    }
  }
  if (c.status === "pending") card.note = isEditTool(c.name) ? "waiting for your review" : "waiting for your permission";
  if (c.output !== undefined) card.output = c.output;
  const results = search && c.status === "done" ? resultLines(c.name, c.output) : undefined;
  if (results) card.results = results;
  if (search && searchArgsInLabel(c.arguments)) card.argsInLine = true;
  if (actions?.length) {
    card.actions = actions;
    if (ask?.deliberate?.length) card.deliberate = ask.deliberate;
    if (ask?.message) card.question = ask.message;
  }
  if (ask?.outcome) card.outcome = ask.outcome;
  return card;
}

function viewParts(parts: ShownPart[]): ViewPart[] {
  return parts.map((p) => (p.kind === "text" ? { kind: "text", html: renderMarkdown(p.text) } : { kind: "tool", card: toolCard(p.call) }));
}

/** A stored or streaming turn for the view. */
export function viewTurn(t: ShownTurn): ViewTurn {
  const parts = viewParts(t.parts);
  // An answer with no stored parts (a plain text answer) still has its text.
  if (parts.length === 0 && t.answer) parts.push({ kind: "text", html: renderMarkdown(t.answer) });
  return { question: t.question, questionId: t.questionId, ids: t.ids, parts, status: t.status, error: t.error, files: [], compacted: t.compacted, summary: t.summary, usage: usageLine(t.usage) };
}

/**
 * What came of a question, as its card says it once closed
 * (ctxls/questionClosed's outcome): the chosen action's title, or why
 * there was none.
 */
export function questionOutcome(outcome: string, actions: { id: string; title: string }[]): string {
  const chosen = actions.find((a) => a.id === outcome);
  if (chosen) return `Answered: ${chosen.title}`;
  if (outcome === "timeout") return "Not answered in time";
  if (outcome === "cancelled") return "Not answered: the turn ended";
  return `Closed: ${outcome}`;
}

/** A question shown on a card: a permission question (ctxls/question) or an edit's review (ctxls/reviewEdit). */
export interface OpenAsk {
  actions: string[];
  /** Settles the question: an action's title, or undefined for none (denied). */
  answer(title: string | undefined): void;
  /** Of actions, those that take a deliberate act (ctxls/question's deliberate). */
  deliberate?: string[];
  /** ctxls/question's id, for a question with a card of its own (kind "trust"). */
  id?: string;
  /** Its text, shown on a card of its own. */
  message?: string;
  /**
   * Set once the question was closed (ctxls/questionClosed): what came of
   * it. A closed question stays on its card with this, without its answers.
   */
  outcome?: string;
}

/**
 * A running turn's answer as it streams: its text deltas and its tool calls
 * (ctxls/toolCall, updated in place by id) in the order they came, and the
 * permission questions, each shown on the card that waits for it.
 *
 * The daemon sends a call's "pending" update and asks with
 * window/showMessageRequest from two goroutines, so either may come first:
 * a question and a pending card are paired in the order they came,
 * whichever arrives second. A card that leaves "pending" settles its
 * question if it is still open (the daemon stopped waiting).
 */
export class StreamingAnswer {
  private parts: ({ kind: "text"; text: string; html?: string } | { kind: "tool"; call: ShownToolCall; ask?: OpenAsk } | { kind: "ask"; ask: OpenAsk })[] = [];
  private unpaired: OpenAsk[] = [];
  /** Questions about a named call whose card has not come yet (an edit's review), by call id. */
  private byId = new Map<string, OpenAsk>();

  /** Text of the model's: it follows the last part. */
  delta(text: string): void {
    const last = this.parts[this.parts.length - 1];
    if (last?.kind === "text") {
      last.text += text;
      last.html = undefined;
    } else this.parts.push({ kind: "text", text });
  }

  /** Every text delta so far, joined. */
  text(): string {
    return this.parts.map((p) => (p.kind === "text" ? p.text : "")).join("");
  }

  /** A ctxls/toolCall: a new card, or the card of its id updated. */
  toolCall(p: ToolCallUpdate): void {
    const call: ShownToolCall = { id: p.id, name: p.name, server: p.server || undefined, tool: p.tool || splitToolName(p.name).tool, arguments: p.arguments, status: p.status };
    if (p.progress) call.progress = p.progress;
    if (p.summary) call.summary = p.summary;
    if (p.output !== undefined) call.output = p.output.length > maxShownOutput ? p.output.slice(0, maxShownOutput) + "…" : p.output;
    let part = this.parts.find((x) => x.kind === "tool" && x.call.id === p.id) as { kind: "tool"; call: ShownToolCall; ask?: OpenAsk } | undefined;
    if (!part) {
      part = { kind: "tool", call };
      this.parts.push(part);
    } else {
      part.call = call;
    }
    if (call.status === "pending") {
      const named = this.byId.get(call.id);
      if (!part.ask && named) {
        part.ask = named;
        this.byId.delete(call.id);
      }
      // An edit's card waits for its review (askFor), never for another call's question.
      if (!part.ask && this.unpaired.length && !isEditTool(call.name)) part.ask = this.unpaired.shift();
    } else if (part.ask && part.ask.outcome === undefined) {
      const ask = part.ask;
      part.ask = undefined;
      ask.answer(undefined);
    }
  }

  /** A permission question: shown on the oldest pending card without one, else kept until such a card comes. */
  ask(a: OpenAsk): void {
    const part = this.parts.find((x) => x.kind === "tool" && x.call.status === "pending" && !x.ask && !isEditTool(x.call.name)) as { ask?: OpenAsk } | undefined;
    if (part) part.ask = a;
    else this.unpaired.push(a);
  }

  /** A question about one call (an edit's review, which names its call): shown on that call's card, now or when it comes. */
  askFor(id: string, a: OpenAsk): void {
    const part = this.parts.find((x) => x.kind === "tool" && x.call.id === id) as { kind: "tool"; call: ShownToolCall; ask?: OpenAsk } | undefined;
    if (part && part.call.status === "pending") part.ask = a;
    else if (!part) this.byId.set(id, a);
    // A card that is no longer pending: the daemon stopped waiting; the question is not shown.
  }

  /** A question with a card of its own (a trust question): after the parts so far. */
  askAlone(a: OpenAsk): void {
    this.parts.push({ kind: "ask", ask: a });
  }

  /**
   * A question closed (ctxls/questionClosed): its answers go, its card says
   * outcome. A question whose call's card has not come yet is dropped.
   */
  closed(a: OpenAsk, outcome: string): void {
    a.outcome = outcome;
    this.unpaired = this.unpaired.filter((x) => x !== a);
    for (const [id, x] of this.byId) if (x === a) this.byId.delete(id);
  }

  /** Takes the question off the view once it has an answer (from anywhere). */
  settled(a: OpenAsk): void {
    this.unpaired = this.unpaired.filter((x) => x !== a);
    for (const [id, x] of this.byId) if (x === a) this.byId.delete(id);
    for (const p of this.parts) if (p.kind === "tool" && p.ask === a) p.ask = undefined;
  }

  /** The open question shown on a card, for an answer given on the card. */
  askOf(id: string): OpenAsk | undefined {
    const part = this.parts.find((x) => x.kind === "tool" && x.call.id === id);
    return part?.kind === "tool" && part.ask?.outcome === undefined ? part.ask : undefined;
  }

  /** The open question with a card of its own, by the question's id. */
  askById(id: string): OpenAsk | undefined {
    const part = this.parts.find((x) => x.kind === "ask" && x.ask.id === id);
    return part?.kind === "ask" && part.ask.outcome === undefined ? part.ask : undefined;
  }

  /** Every question still open (the turn ended: they are settled as unanswered). */
  openAsks(): OpenAsk[] {
    const out = [...this.unpaired, ...this.byId.values()];
    for (const p of this.parts) if ((p.kind === "tool" || p.kind === "ask") && p.ask && p.ask.outcome === undefined) out.push(p.ask);
    return out;
  }

  /** The parts as the view draws them (only changed text is rendered again). */
  view(): ViewPart[] {
    return this.parts.map((p) => {
      if (p.kind === "tool") return { kind: "tool", card: toolCard(p.call, p.ask && p.ask.outcome === undefined ? p.ask.actions : undefined, p.ask) };
      if (p.kind === "ask") {
        const card: AskCard = { id: p.ask.id ?? "", message: p.ask.message ?? "" };
        if (p.ask.outcome !== undefined) card.outcome = p.ask.outcome;
        else {
          card.actions = p.ask.actions;
          if (p.ask.deliberate?.length) card.deliberate = p.ask.deliberate;
        }
        return { kind: "ask", card };
      }
      p.html ??= renderMarkdown(p.text);
      return { kind: "text", html: p.html };
    });
  }
}

export { escapeHtml };

/** How long ago a time was, as the session pickers say it: "just now", "5 min ago", "2 h ago", "3 days ago". */
export function ago(then: Date | string, now: Date = new Date()): string {
  const t = typeof then === "string" ? new Date(then) : then;
  const s = Math.max(0, (now.getTime() - t.getTime()) / 1000);
  if (!Number.isFinite(s)) return "";
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  const d = Math.floor(s / 86400);
  if (d < 30) return d === 1 ? "yesterday" : `${d} days ago`;
  return t.toLocaleDateString();
}

/** "1 file", "2 files". */
export function plural(n: number, one: string, many = one + "s"): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A session picker's row: the title, when it was last used, and what tells it apart (its first question, its size). */
export function sessionRow(
  s: { title: string; updatedAt: string; questions?: number; firstQuestion?: string; fileCount: number },
  current: boolean,
  now = new Date(),
): { label: string; description: string; detail: string } {
  const size = [plural(s.questions ?? 0, "question"), ...(s.fileCount ? [plural(s.fileCount, "file")] : [])].join(", ");
  return {
    label: s.title,
    description: ago(s.updatedAt, now),
    detail: (s.firstQuestion ? `“${s.firstQuestion}” · ` : "") + size + (current ? " (current)" : ""),
  };
}
