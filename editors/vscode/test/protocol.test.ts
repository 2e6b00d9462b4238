// Drives the real ctxls binary over stdio with vscode-jsonrpc through the
// extension's protocol layer, and checks the parts of the extension that do
// not need VS Code (Markdown, the view's folding rules, finding the binary,
// which documents are synced). Run by editors/vscode/vscode_test.go, which
// sets CTXLS_BIN and OPENAI_BASE_URL (the in-repo test server, with replies
// scripted in the order this test asks).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { CtxlsClient, ContextChanged, SessionUpdated, ToolCallUpdate, turnsFromMessages } from "../src/protocol";
import { fenceInfo, highlight, renderMarkdown } from "../src/markdown";
import { changedSpan } from "../src/span";
import { contextSets, instructionChips, OpenAsk, questionOutcome, ReviewAnswers, reviewDecision, selectedLines, rewindUndoQuestion, shortArguments, StreamingAnswer, toolCard, turnChangedFiles, turnFileChip, undoNote, usageLine, viewTurn } from "../src/viewstate";
import { resolveBinary } from "../src/daemon";
import { parseGrepLine, resolveResultPath, searchLabel, searchSummary } from "../src/search";
import { editorFolders, isUserFile } from "../src/sync";

function until<T>(what: string, f: () => T | undefined, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const v = f();
      if (v !== undefined && v !== false) return resolve(v);
      if (Date.now() > end) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

test("chat, cancel, show and search through the protocol layer against the real binary", async () => {
  const bin = process.env.CTXLS_BIN;
  const baseURL = process.env.OPENAI_BASE_URL;
  assert.ok(bin && baseURL, "CTXLS_BIN and OPENAI_BASE_URL must be set");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-vscode-"));
  const file = path.join(work, "app.ts");
  fs.writeFileSync(file, "export const x = 1;\n");
  const agents = path.join(work, "AGENTS.md");
  const agentsText = "Answer in one sentence.\n";
  fs.writeFileSync(agents, agentsText);
  const child = spawn(bin!, ["serve", "--data-dir", path.join(work, "data")], { stdio: ["pipe", "pipe", "inherit"] });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const changes: ContextChanged[] = [];
  const titles: SessionUpdated[] = [];
  const ctxls = new CtxlsClient(conn);
  ctxls.onContextChanged((p) => changes.push(p));
  ctxls.onSessionUpdated((p) => titles.push(p));
  conn.listen();
  try {
    const init = await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: "file://" + work,
      capabilities: { general: { positionEncodings: ["utf-16"] }, window: { workDoneProgress: true } },
      initializationOptions: { provider: { baseURL, model: "test-model" }, viewIdleMs: 200 },
    });
    assert.equal((init as any).serverInfo.name, "ctxls");
    await conn.sendNotification("initialized", {});
    const uri = "file://" + file;
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "typescript", version: 1, text: "export const x = 1;\n" } });
    await conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, text: "// UNSAVED FROM VSCODE\n" }],
    });
    // The view notification: the daemon takes it (or, before it knows it, ignores it) without an error.
    ctxls.didChangeView({ textDocument: { uri }, selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } } });
    const set = await ctxls.addFiles([file]);
    assert.deepEqual(set.items, [file]);
    const changed = await until("contextChanged", () => changes.find((c) => c.reason === "changed"));
    assert.deepEqual(contextSets(changed.context, changed.missing), [{ name: "files", items: [{ label: "app.ts", value: file, path: file, missing: false }] }]);

    // 1. A whole turn: the deltas add up to the answer.
    let streamed = "";
    const ends: string[] = [];
    const res = await ctxls.turn("What is x?", { onDelta: (d) => (streamed += d), onEnd: (m) => ends.push(m) });
    assert.equal(res.finishReason, "stop");
    assert.equal(res.text, "x is one.");
    assert.equal(streamed, res.text);
    assert.deepEqual(ends, ["done"]);
    // The project's instructions file went with the turn: its result names it (the chat's header shows it).
    assert.deepEqual(res.instructions, [{ path: agents, bytes: agentsText.length, size: agentsText.length }]);
    const sessionId = res.sessionId!;
    await until("the model's title", () => titles.find((t) => t.titleSource === "model"));

    // The editor's view, once it rests, becomes the session's applet.
    ctxls.didChangeView({ textDocument: { uri }, selection: { start: { line: 0, character: 2 }, end: { line: 1, character: 4 } } });
    const applet = await until("the applet", () => changes.find((c) => c.applet));
    assert.deepEqual(applet.applet, { slug: "editor", params: { file, line: "1", selection: "1-2" } });
    assert.deepEqual(contextSets(applet.context).find((s) => s.name === "applet")?.items, [{ label: "editor app.ts:1–2", value: "*", path: file }]);

    // 2. A cancelled turn is an outcome, not an error, and keeps its partial text.
    let partial = "";
    const cancelled = ctxls.turn("Tell me more", { onDelta: (d) => (partial += d) });
    await until("the first delta", () => partial.length > 0);
    assert.ok(await ctxls.cancel());
    const c = await cancelled;
    assert.equal(c.finishReason, "cancelled");
    assert.equal(c.text, "partial ");
    assert.equal(ctxls.current, undefined);

    // show: the history folds into turns, the cancelled answer marked.
    const shown = await ctxls.show();
    assert.equal(shown.session.id, sessionId);
    const turns = turnsFromMessages(shown.messages);
    assert.deepEqual(
      turns.map((t) => [t.question, t.answer, t.status]),
      [
        ["What is x?", "x is one.", "done"],
        ["Tell me more", "partial ", "cancelled"],
      ],
    );

    // search finds message text, not only titles.
    const { hits } = await ctxls.search("partial");
    assert.ok(hits.some((h) => h.sessionId === sessionId && h.role === "assistant"), JSON.stringify(hits));

    const renamed = await ctxls.rename("Explaining x");
    assert.equal(renamed.session.titleSource, "user");
    const cleared = await ctxls.clearTitle();
    assert.equal(cleared.session.titleSource, "auto");
    assert.equal(cleared.session.title, "What is x?");

    const preview = await ctxls.preview("And y?");
    // The file's unsaved text went with the first question, in its turn's context (the system
    // prompt stays the same); this turn's context names it as shown above and unchanged, before
    // the question (issue 23: a later turn sends only what changed).
    const firstQuestion = preview.messages.find((m) => m.role === "user" && m.content.endsWith("What is x?"));
    assert.match(firstQuestion?.content ?? "", /<ctxls-context>[\s\S]*UNSAVED FROM VSCODE[\s\S]*<\/ctxls-context>\n\nWhat is x\?$/);
    assert.ok(!preview.messages[0].content.includes("UNSAVED FROM VSCODE"), "the file's text is in the system prompt");
    const last = preview.messages.at(-1)?.content ?? "";
    assert.ok(last.includes("Shown above and unchanged since") && last.includes(`${file} (unsaved editor text)`), last);
    assert.match(last, /<\/ctxls-context>\n\nAnd y\?$/);

    // Deliberately without the required field: the daemon says what is missing.
    await assert.rejects(ctxls.command("ctxls.session.resume", {} as { sessionId: string }), /sessionId is required/);

    // A new session leaves nothing of the old one current.
    const fresh = await ctxls.newSession();
    assert.notEqual(fresh.session.id, sessionId);
    assert.deepEqual((await ctxls.context()).context, {});

    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    child.kill();
  }
});

test("MCP tool calls against the real binary: ctxls/toolCall updates, the question answered on the card with an action's title, the calls in the history", async () => {
  const bin = process.env.CTXLS_BIN;
  const baseURL = process.env.OPENAI_BASE_URL;
  const servers = process.env.CTXLS_TESTMCP;
  assert.ok(bin && baseURL && servers, "CTXLS_BIN, OPENAI_BASE_URL and CTXLS_TESTMCP must be set");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-vscode-mcp-"));
  const child = spawn(bin!, ["serve", "--data-dir", path.join(work, "data")], { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, XDG_CONFIG_HOME: path.join(work, "config") } });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const ctxls = new CtxlsClient(conn);
  // What the extension does: every update goes to the turn's answer, every
  // question to it as well, answered on the card (here: by the test).
  const answer = new StreamingAnswer();
  const updates: ToolCallUpdate[] = [];
  ctxls.onToolCall((p) => {
    updates.push(p);
    answer.toolCall(p);
  });
  const asked: { type: number; message: string; actions: { title: string }[] }[] = [];
  conn.onRequest("window/showMessageRequest", (p: { type: number; message: string; actions: { title: string }[] }) => {
    asked.push(p);
    return new Promise((resolve) => {
      const q: OpenAsk = {
        actions: p.actions.map((a) => a.title),
        answer: (title) => {
          answer.settled(q);
          resolve(title ? { title } : null);
        },
      };
      answer.ask(q);
    });
  });
  conn.listen();
  try {
    await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: "file://" + work,
      capabilities: { general: { positionEncodings: ["utf-16"] }, window: { workDoneProgress: true } },
      initializationOptions: { provider: { baseURL, model: "test-model" }, mcpServers: JSON.parse(servers!) },
    });
    await conn.sendNotification("initialized", {});
    // The model calls echo (allowed once on its card), then add (denied on its card).
    const turn = ctxls.turn("Use the tools", { onDelta: (d) => answer.delta(d) });
    // The calls' ids are ctxls's own (ANSWER:INDEX, unique in the session),
    // not the provider's (node_echo, node_add), in the order they came.
    const ids = () => [...new Set(updates.map((u) => u.id))];
    for (const [n, title] of [
      [0, "Allow once"],
      [1, "Deny"],
    ] as const) {
      const id = await until(`call ${n}`, () => ids()[n], 15000);
      assert.match(id, /^\d+:\d+$/);
      const q = await until(`the question on ${id}'s card`, () => answer.askOf(id), 15000);
      assert.deepEqual(q.actions, ["Allow once", "Always in this session", "Deny"]);
      const card = answer.view().flatMap((p) => (p.kind === "tool" && p.card.id === id ? [p.card] : []))[0];
      assert.equal(card.note, "waiting for your permission");
      q.answer(title);
    }
    const out = await turn;
    assert.equal(out.finishReason, "stop");
    assert.match(asked[0].message, /^ctxls: the model wants to call t · echo \(read-only\) with \{"text":"hi from node"\}\. Allow it\?$/);
    assert.match(asked[1].message, /t · add \(may change or delete things\) with \{"a":2,"b":3\}\. Allow it\?$/);
    const seq = (id: string) => updates.filter((u) => u.id === id).map((u) => u.status);
    const [echoId, addId] = ids();
    assert.deepEqual(seq(echoId), ["pending", "running", "done"]);
    assert.deepEqual(seq(addId), ["pending", "declined"]);
    const parts = answer.view();
    assert.deepEqual(
      parts.map((p) => (p.kind === "text" ? p.html.trim() : p.kind === "ask" ? p.card.message : [p.card.title, p.card.args, p.card.status, p.card.output])),
      [["t · echo", 'text: "hi from node"', "done", "echo: hi from node"], ["t · add", "a: 2, b: 3", "declined", parts[1].kind === "tool" ? parts[1].card.output : ""], "<p>Echoed.</p>"],
    );
    assert.match((parts[1] as any).card.output, /declined/);
    // The same cards from the stored session.
    const shown = await ctxls.show(out.sessionId);
    const [t] = turnsFromMessages(shown.messages);
    assert.deepEqual(
      t.parts.map((p) => (p.kind === "text" ? p.text : [p.call.id, p.call.server, p.call.tool, p.call.arguments, p.call.status])),
      [[echoId, "t", "echo", '{"text":"hi from node"}', "done"], [addId, "t", "add", '{"a":2,"b":3}', "declined"], "Echoed."],
    );
    assert.equal((t.parts[0] as any).call.output, "echo: hi from node");
    assert.match((t.parts[1] as any).call.output, /declined/);
    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    child.kill();
  }
});

test("the model's edits against the real binary: reviewEdit asked (on the card too), accepted and applied with workspace/applyEdit at the editor's version, rejected, auto mode without a question", async () => {
  const bin = process.env.CTXLS_BIN;
  const baseURL = process.env.CTXLS_EDITS_BASE_URL;
  assert.ok(bin && baseURL, "CTXLS_BIN and CTXLS_EDITS_BASE_URL must be set");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-vscode-edits-"));
  const file = path.join(work, "calc.ts");
  fs.writeFileSync(file, "export function sub(a: number, b: number): number {\n  return a - b;\n}\n");
  const child = spawn(bin!, ["serve", "--data-dir", path.join(work, "data")], { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, XDG_CONFIG_HOME: path.join(work, "config") } });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const ctxls = new CtxlsClient(conn);
  const uri = "file://" + file;
  // The editor's buffer: what the daemon is told, and what applyEdit changes.
  let text = "export function sub(a: number, b: number): number {\n  return a - b;\n}\n// unsaved\n";
  let version = 2;
  const applied: any[] = [];
  conn.onRequest("workspace/applyEdit", async (p: any) => {
    applied.push(p);
    const dc = p.edit.documentChanges[0];
    if (dc.textDocument.version !== null && dc.textDocument.version !== version) return { applied: false, failureReason: "version" };
    const e = dc.edits[0];
    const at = (pos: { line: number; character: number }) => text.split("\n").slice(0, pos.line).reduce((n, l) => n + l.length + 1, 0) + pos.character;
    text = text.slice(0, at(e.range.start)) + e.newText + text.slice(at(e.range.end));
    version++;
    await conn.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [{ text }] });
    return { applied: true };
  });
  // What the extension does: the review on the call's card, answered there (here: by the test).
  const answer = new StreamingAnswer();
  const updates: ToolCallUpdate[] = [];
  ctxls.onToolCall((p) => {
    updates.push(p);
    answer.toolCall(p);
  });
  const reviews: any[] = [];
  ctxls.onReviewEdit((p) => {
    reviews.push(p);
    return new Promise((resolve) => {
      const q: OpenAsk = {
        actions: [ReviewAnswers.accept, ReviewAnswers.acceptAll, ReviewAnswers.reject],
        answer: (title) => {
          answer.settled(q);
          resolve({ decision: reviewDecision(title) });
        },
      };
      answer.askFor(p.id, q);
    });
  });
  conn.listen();
  try {
    await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: "file://" + work,
      capabilities: {
        general: { positionEncodings: ["utf-16"] },
        window: { workDoneProgress: true },
        workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ["create"] } },
      },
      initializationOptions: { provider: { baseURL, model: "test-model" }, reviewEdits: true },
    });
    await conn.sendNotification("initialized", {});
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "typescript", version: 1, text: "x" } });
    await conn.sendNotification("textDocument/didChange", { textDocument: { uri, version: 2 }, contentChanges: [{ text }] });
    // A titled session: no title request takes one of the scripted replies.
    await ctxls.newSession("Edits");
    // The model edits calc.ts twice: the first accepted on its card, the second rejected.
    const turn = ctxls.turn("Swap the subtraction", { onDelta: (d) => answer.delta(d) });
    // The calls' ids are ctxls's own, in the order they came (node_e1, node_e2 to the provider).
    const ids = () => [...new Set(updates.map((u) => u.id))];
    for (const [n, title] of [
      [0, ReviewAnswers.accept],
      [1, ReviewAnswers.reject],
    ] as const) {
      const id = await until(`call ${n}`, () => ids()[n], 15000);
      assert.match(id, /^\d+:\d+$/);
      const q = await until(`the review on ${id}'s card`, () => answer.askOf(id), 15000);
      const card = answer.view().flatMap((p) => (p.kind === "tool" && p.card.id === id ? [p.card] : []))[0];
      assert.equal(card.note, "waiting for your review");
      q.answer(title);
    }
    const out = await turn;
    assert.equal(out.finishReason, "stop");
    assert.equal(reviews.length, 2);
    assert.deepEqual(
      { path: reviews[0].path, uri: reviews[0].uri, id: reviews[0].id, create: !!reviews[0].create, newText: reviews[0].newText },
      { path: file, uri, id: ids()[0], create: false, newText: text },
    );
    assert.match(reviews[0].diff, /-  return a - b;\n\+  return b - a;/);
    assert.match(reviews[0].oldText, /\/\/ unsaved/);
    // Applied once, to the buffer, at the version it was computed against; the disk untouched.
    assert.equal(applied.length, 1);
    assert.equal(applied[0].edit.documentChanges[0].textDocument.version, 2);
    assert.equal(text, "export function sub(a: number, b: number): number {\n  return b - a;\n}\n// unsaved\n");
    assert.match(fs.readFileSync(file, "utf8"), /return a - b;/);
    const seq = (id: string) => updates.filter((u) => u.id === id).map((u) => u.status);
    assert.deepEqual(seq(ids()[0]), ["pending", "running", "done"]);
    assert.deepEqual(seq(ids()[1]), ["pending", "declined"]);
    // Auto: applied without a question; the mode is the session's.
    const set = await ctxls.setReviewMode("auto", out.sessionId);
    assert.equal(set.session.meta.reviewMode, "auto");
    const auto = await ctxls.turn("Rename it");
    assert.equal(auto.finishReason, "stop");
    assert.equal(reviews.length, 2);
    assert.equal(applied.length, 2);
    assert.match(text, /export function minus\(/);
    assert.equal((await ctxls.setReviewMode("off")).session.meta.reviewMode, "off");
    assert.equal((await ctxls.show(out.sessionId)).session.meta.reviewMode, "off");
    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    child.kill();
  }
});

test("markdown: lists, emphasis, code blocks with a copy button; raw HTML stays text", () => {
  const html = renderMarkdown("Steps:\n\n- one\n- _two_\n\n1. **three**\n\n```ts\nconst a = 1 < 2;\n```\n\n<script>alert(1)</script> <b>x</b>\n\n[docs](https://example.com/a) and [file](src/app.ts#L3)");
  assert.match(html, /<ul>\s*<li>one<\/li>\s*<li><em>two<\/em><\/li>\s*<\/ul>/);
  assert.match(html, /<ol>\s*<li><strong>three<\/strong><\/li>\s*<\/ol>/);
  assert.match(
    html,
    /<div class="code-block"><div class="code-head"><span class="lang">ts<\/span><span class="code-actions"><button class="code-action insert"[^>]*>Insert<\/button><button class="code-action apply" type="button" title="Apply in the editor: in place of the selection, else at the cursor \(reviewed as a diff in the ask mode\)" aria-label="Apply in the editor: in place of the selection, else at the cursor \(reviewed as a diff in the ask mode\)">Apply<\/button><button class="copy"[^>]*>Copy<\/button><\/span><\/div><pre><code class="language-ts"><span class="hljs-keyword">const<\/span> a = <span class="hljs-number">1<\/span> &lt; <span class="hljs-number">2<\/span>;\n<\/code><\/pre><\/div>/,
  );
  assert.doesNotMatch(html, /<script|<b>/);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &lt;b&gt;x&lt;\/b&gt;/);
  assert.match(html, /<a href="https:\/\/example.com\/a" data-href="https:\/\/example.com\/a"[^>]*>docs<\/a>/);
  assert.match(html, /data-href="src\/app.ts#L3"/);
  // markdown-it refuses script links.
  assert.doesNotMatch(renderMarkdown("[x](javascript:alert(1))"), /href="javascript/);
});

test("code blocks: highlighted when the language is known (names and aliases), plain escaped text otherwise; HTML in code stays text", () => {
  assert.equal(highlight("func main() {}", "go"), '<span class="hljs-function"><span class="hljs-keyword">func</span> <span class="hljs-title">main</span><span class="hljs-params">()</span></span> {}');
  assert.match(highlight("x = 'a'", "py"), /<span class="hljs-string">&#x27;a&#x27;<\/span>/);
  assert.match(highlight("echo <b>", "sh"), /<span class="hljs-built_in">echo<\/span> &lt;b&gt;/);
  assert.equal(highlight("const a = <b>", ""), "const a = &lt;b&gt;");
  assert.equal(highlight("const a = <b>", "no-such-language"), "const a = &lt;b&gt;");
  assert.doesNotMatch(renderMarkdown("```html\n<script>alert(1)</script>\n```"), /<script/);
  // A block too long to highlight on every render is plain.
  const long = "const a = 1;\n".repeat(10_000);
  assert.equal(highlight(long, "ts"), long);
});

test("code blocks: the file a fence names goes to Apply; the language stays the class", () => {
  assert.deepEqual(fenceInfo("ts"), { lang: "ts" });
  assert.deepEqual(fenceInfo(""), { lang: "" });
  assert.deepEqual(fenceInfo("ts src/app.ts"), { lang: "ts", file: "src/app.ts" });
  assert.deepEqual(fenceInfo("main.go"), { lang: "go", file: "main.go" });
  assert.deepEqual(fenceInfo('python title="tools/run.py"'), { lang: "python", file: "tools/run.py" });
  assert.deepEqual(fenceInfo("js {1,3}"), { lang: "js" });
  const html = renderMarkdown('```go cmd/main.go\npackage main\n```\n\n```sh\necho "<x>"\n```');
  assert.match(html, /<button class="code-action apply"[^>]* data-file="cmd\/main.go">Apply<\/button>/);
  assert.match(html, /<code class="language-go"><span class="hljs-keyword">package<\/span> main\n<\/code>/);
  assert.equal((html.match(/data-file=/g) ?? []).length, 1);
  assert.match(html, /<span class="hljs-built_in">echo<\/span> <span class="hljs-string">&quot;&lt;x&gt;&quot;<\/span>/);
});

test("changedSpan: one replacement without the common ends, never inside a surrogate pair", () => {
  assert.deepEqual(changedSpan("return a - b;\n", "return b - a;\n"), { start: 7, oldEnd: 12, text: "b - a" });
  assert.deepEqual(changedSpan("same", "same"), { start: 4, oldEnd: 4, text: "" });
  assert.deepEqual(changedSpan("", "new\n"), { start: 0, oldEnd: 0, text: "new\n" });
  assert.deepEqual(changedSpan("x = 😀;", "x = 😃;"), { start: 4, oldEnd: 6, text: "😃" });
  for (const [a, b] of [
    ["abc", "abXc"],
    ["aaa", "aa"],
    ["😀😀", "😀"],
    ["line 1\nline 2\n", "line 0\nline 1\nline 2\n"],
  ]) {
    const s = changedSpan(a, b);
    assert.equal(a.slice(0, s.start) + s.text + a.slice(s.oldEnd), b, `${a} → ${b}`);
  }
});

test("context cards: files first by name, the applet as one item", () => {
  assert.deepEqual(
    contextSets({ ports: ["8080"], applet: ["editor", "file=/w/src/a.go", "line=42", "selection=42-49"], files: ["/w/b.go", "/w/gone.go"] }, ["/w/gone.go"]),
    [
      { name: "files", items: [{ label: "b.go", value: "/w/b.go", path: "/w/b.go", missing: false }, { label: "gone.go", value: "/w/gone.go", path: "/w/gone.go", missing: true }] },
      { name: "applet", items: [{ label: "editor a.go:42–49", value: "*", path: "/w/src/a.go" }] },
      { name: "ports", items: [{ label: "8080", value: "8080" }] },
    ],
  );
  assert.deepEqual(contextSets({ applet: ["git-diff", "path=/repo", "mode=split"] })[0].items[0], { label: "git-diff (path=/repo, mode=split)", value: "*", path: undefined });
});

test("turnsFromMessages: an answer's text and tool calls in order, each call with its result; failures keep their error", () => {
  const turns = turnsFromMessages([
    { id: 1, role: "user", content: "Q1", status: "complete" },
    // As the daemon stores them (OpenAI's shape), and the flat shape.
    {
      id: 2,
      role: "assistant",
      content: "Let me look.",
      toolCalls: [
        { id: "c1", type: "function", function: { name: "mcp__github__list_issues", arguments: '{"repo":"ann/app"}' } },
        { id: "c2", name: "read_file", arguments: '{"path":"a.go"}' },
        {},
      ],
      status: "complete",
    },
    { id: 3, role: "tool", content: "[#12 Login loops]", toolCallId: "c1", status: "complete" },
    { id: 4, role: "tool", content: "error: no such file", toolCallId: "c2", status: "error" },
    { id: 5, role: "assistant", content: "A1", status: "complete", model: "m" },
    { id: 6, role: "user", content: "Q2", status: "complete" },
    { id: 7, role: "assistant", content: "half\n\nError: the provider said no", status: "error" },
  ]);
  assert.deepEqual(turns, [
    {
      question: "Q1",
      questionId: 1,
      ids: [1, 2, 3, 4, 5],
      answer: "Let me look.\n\nA1",
      parts: [
        { kind: "text", text: "Let me look." },
        { kind: "tool", call: { id: "c1", name: "mcp__github__list_issues", server: "github", tool: "list_issues", arguments: '{"repo":"ann/app"}', status: "done", output: "[#12 Login loops]" } },
        { kind: "tool", call: { id: "c2", name: "read_file", tool: "read_file", arguments: '{"path":"a.go"}', status: "failed", output: "error: no such file" } },
        { kind: "text", text: "A1" },
      ],
      status: "done",
      model: "m",
    },
    { question: "Q2", questionId: 6, ids: [6, 7], answer: "half", parts: [{ kind: "text", text: "half" }], status: "error", error: "the provider said no" },
  ]);
  // The view's cards for them: a server's tool by its server, ctxls's own by its name, with the stored status.
  const cards = viewTurn(turns[0]).parts.flatMap((p) => (p.kind === "tool" ? [p.card] : []));
  assert.deepEqual(
    cards.map((c) => [c.title, c.args, c.status, c.statusText, c.output]),
    [
      ["github · list_issues", 'repo: "ann/app"', "done", "done", "[#12 Login loops]"],
      ["read_file", 'path: "a.go"', "failed", "failed", "error: no such file"],
    ],
  );
});

test("tool cards: arguments shortened to one line, in full indented; the status in words", () => {
  assert.equal(shortArguments('{"text": "hi",\n "n": 2, "deep": {"a": [1, 2]}}'), 'text: "hi", n: 2, deep: {"a":[1,2]}');
  assert.equal(shortArguments(""), "");
  assert.equal(shortArguments("{}"), "");
  assert.equal(shortArguments('{"t": "cut at the daemon\'s lim'), '{"t": "cut at the daemon\'s lim');
  const long = shortArguments(JSON.stringify({ text: "x".repeat(500) }));
  assert.equal(long.length, 120);
  assert.ok(long.endsWith("…"));
  const card = toolCard({ id: "c", name: "mcp__t__slow", server: "t", tool: "slow", arguments: '{"steps":3}', status: "running", progress: "step 2 (2/3)" });
  assert.deepEqual(card, { id: "c", title: "t · slow", args: "steps: 3", argsFull: '{\n  "steps": 3\n}', status: "running", statusText: "running: step 2 (2/3)" });
  const pending = toolCard({ ...card, name: "x", tool: "x", arguments: "{}", status: "pending" }, ["Allow once", "Deny"]);
  assert.deepEqual([pending.statusText, pending.note, pending.actions], ["waiting", "waiting for your permission", ["Allow once", "Deny"]]);
  assert.equal(card.note, undefined);
  for (const s of ["done", "failed", "declined"] as const) assert.equal(toolCard({ ...card, name: "x", tool: "x", arguments: "{}", status: s }).statusText, s);
});

test("plan cards: an update_plan call is the plan (how much is done, its items), live and stored; anything else is not", () => {
  const args = JSON.stringify({ items: [{ content: "Read main.go", status: "completed" }, { content: "Fix the handler", status: "in_progress", priority: "high" }, { content: "Run the tests", status: "pending" }] });
  const card = toolCard({ id: "p", name: "update_plan", server: "", tool: "update_plan", arguments: args, status: "done" });
  assert.equal(card.title, "plan");
  assert.equal(card.args, "");
  assert.equal(card.statusText, "1 of 3 done");
  assert.deepEqual(card.plan, [
    { content: "Read main.go", status: "completed", priority: undefined },
    { content: "Fix the handler", status: "in_progress", priority: "high" },
    { content: "Run the tests", status: "pending", priority: undefined },
  ]);
  assert.deepEqual(toolCard({ id: "p", name: "update_plan", server: "", tool: "update_plan", arguments: args, status: "stored" }).plan?.length, 3);
  // Refused (invalid) or still running: no plan shown; an MCP tool of the same name is not ctxls's.
  assert.equal(toolCard({ id: "p", name: "update_plan", server: "", tool: "update_plan", arguments: args, status: "failed" }).plan, undefined);
  assert.equal(toolCard({ id: "p", name: "mcp__s__update_plan", server: "s", tool: "update_plan", arguments: args, status: "done" }).plan, undefined);
  assert.equal(toolCard({ id: "p", name: "update_plan", server: "", tool: "update_plan", arguments: "{not json", status: "done" }).plan, undefined);
});

test("search cards: what the search looked for, what it found (the live summary, or read from a stored result), its lines to follow", () => {
  const out = "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)\n\nauth/login.go-2- \nauth/login.go:3: func loginRedirect() {}\nauth/login.go-4- x:3: y\n--\nauth/login.go:9: a-4- b\n";
  // Of the two forms, the prefix that ends first wins.
  assert.deepEqual(parseGrepLine("auth/login.go-4- x:3: y"), { path: "auth/login.go", line: 4, text: "x:3: y", match: false, prefix: "auth/login.go-4- " });
  assert.deepEqual(parseGrepLine("a-b.go:9: a-4- b"), { path: "a-b.go", line: 9, text: "a-4- b", match: true, prefix: "a-b.go:9: " });
  assert.equal(parseGrepLine("--"), undefined);
  assert.equal(searchSummary("grep", out), "3 matches in 2 files");
  assert.equal(searchSummary("grep", out + "\n[1,120 more matches in 3 files not shown: narrow the search]\n"), "1,123 matches (3 shown)");
  assert.equal(searchSummary("grep", "No matches.\n"), "no matches");
  assert.equal(searchSummary("grep", "error: missing closing )"), undefined);
  assert.equal(searchSummary("find_files", "a.go\nb.go\n\n[1,200 more files not shown: narrow]\n"), "1,202 files (2 shown)");
  assert.equal(searchSummary("find_files", "a.go\n"), "1 file");
  assert.equal(searchSummary("list_directory", "a/\nb.go  (1 KB)\n\n(3 entries left out by .gitignore or .ignore rules)\n"), "2 entries");
  assert.equal(searchSummary("list_directory", "(empty)\n"), "empty");
  assert.equal(searchLabel("grep", '{"pattern":"login\\\\s+Redirect","path":"auth","glob":"*.go"}'), "login\\s+Redirect in auth (*.go)");
  assert.equal(searchLabel("find_files", '{"pattern":"**/*.go"}'), "**/*.go");
  assert.equal(searchLabel("list_directory", "{}"), ".");
  assert.equal(resolveResultPath("b/x.go", ["/w/a", "/w/b"]), "/w/b/x.go");
  assert.equal(resolveResultPath("x.go", ["/w/a"]), "/w/a/x.go");
  assert.equal(resolveResultPath("/abs/x.go", ["/w/a"]), "/abs/x.go");
  assert.equal(resolveResultPath("x.go", []), undefined);
  // Live: the call's summary in place of "done", the pattern in place of the arguments.
  const a = new StreamingAnswer();
  a.toolCall({ sessionId: "s", id: "g", name: "grep", tool: "grep", arguments: '{"pattern":"loginRedirect"}', status: "running" } as ToolCallUpdate);
  a.toolCall({ sessionId: "s", id: "g", name: "grep", tool: "grep", arguments: '{"pattern":"loginRedirect"}', status: "done", output: out, summary: "3 matches in 2 files" } as ToolCallUpdate);
  const [part] = a.view();
  assert.ok(part.kind === "tool");
  const card = part.card;
  assert.deepEqual([card.title, card.args, card.statusText, card.argsInLine], ["grep", "loginRedirect", "3 matches in 2 files", true]);
  // Arguments the line does not say: the opened card shows them.
  assert.equal(toolCard({ id: "i", name: "grep", tool: "grep", arguments: '{"pattern":"x","ignore_case":true}', status: "done", output: "No matches.\n" }).argsInLine, undefined);
  assert.deepEqual(
    card.results!.map((r) => [r.kind, r.path ?? "", r.line ?? 0]),
    [
      ["match", "auth/handler.go", 3],
      ["text", "", 0],
      ["context", "auth/login.go", 2],
      ["match", "auth/login.go", 3],
      ["context", "auth/login.go", 4],
      ["text", "", 0],
      ["match", "auth/login.go", 9],
    ],
  );
  // Stored: the summary is read from the result; an MCP server's grep is not ctxls's.
  const turns = turnsFromMessages([
    { id: 1, role: "user", content: "Q", status: "complete" },
    { id: 2, role: "assistant", content: "", status: "complete", toolCalls: [
      { id: "g", type: "function", function: { name: "grep", arguments: '{"pattern":"loginRedirect"}' } },
      { id: "f", type: "function", function: { name: "find_files", arguments: '{"pattern":"**/*.go"}' } },
      { id: "m", type: "function", function: { name: "mcp__x__grep", arguments: '{"pattern":"y"}' } },
    ] },
    { id: 3, role: "tool", content: out, toolCallId: "g", status: "complete" },
    { id: 4, role: "tool", content: "a.go\nb/c.go\n", toolCallId: "f", status: "complete" },
    { id: 5, role: "tool", content: "a.go:1: y\n", toolCallId: "m", status: "complete" },
  ]);
  const cards = viewTurn(turns[0]).parts.flatMap((p) => (p.kind === "tool" ? [p.card] : []));
  assert.deepEqual(
    cards.map((c) => [c.title, c.args, c.statusText, c.results?.length ?? 0]),
    [
      ["grep", "loginRedirect", "3 matches in 2 files", 7],
      ["find_files", "**/*.go", "2 files", 2],
      ["x · grep", 'pattern: "y"', "done", 0],
    ],
  );
  assert.deepEqual(cards[1].results, [
    { kind: "file", text: "a.go", path: "a.go" },
    { kind: "file", text: "b/c.go", path: "b/c.go" },
  ]);
});

test("a streaming answer: text and cards in order, updated by id; a question is paired with its pending card whichever comes first", () => {
  const a = new StreamingAnswer();
  const update = (id: string, status: ToolCallUpdate["status"], extra: Partial<ToolCallUpdate> = {}): ToolCallUpdate => ({
    sessionId: "s",
    id,
    name: "mcp__t__echo",
    server: "t",
    tool: "echo",
    arguments: '{"text":"hi"}',
    status,
    ...extra,
  });
  const answers: (string | undefined)[] = [];
  const ask = (): OpenAsk => {
    const q: OpenAsk = { actions: ["Allow once", "Deny"], answer: (t) => (answers.push(t), a.settled(q)) };
    return q;
  };
  a.delta("Let me ");
  a.delta("check.");
  // The card first, then the question.
  a.toolCall(update("c1", "pending"));
  const q1 = ask();
  a.ask(q1);
  assert.equal(a.askOf("c1"), q1);
  let cards = a.view().flatMap((p) => (p.kind === "tool" ? [p.card] : []));
  assert.deepEqual(cards[0].actions, ["Allow once", "Deny"]);
  q1.answer("Allow once");
  assert.equal(a.askOf("c1"), undefined);
  a.toolCall(update("c1", "running", { progress: "step 1" }));
  a.toolCall(update("c1", "done", { output: "echo: hi" }));
  // The question first, then the card.
  const q2 = ask();
  a.ask(q2);
  a.toolCall(update("c2", "pending"));
  assert.equal(a.askOf("c2"), q2);
  // The daemon stopped waiting (its timeout): the card declined, the question settled unanswered.
  a.toolCall(update("c2", "declined", { output: "The user declined this call" }));
  assert.deepEqual(answers, ["Allow once", undefined]);
  assert.deepEqual(a.openAsks(), []);
  a.delta("Done.");
  const parts = a.view();
  assert.deepEqual(
    parts.map((p) => (p.kind === "text" ? p.html.trim() : p.kind === "ask" ? p.card.message : [p.card.id, p.card.status, p.card.statusText, p.card.output ?? null, p.card.actions ?? null])),
    ["<p>Let me check.</p>", ["c1", "done", "done", "echo: hi", null], ["c2", "declined", "declined", "The user declined this call", null], "<p>Done.</p>"],
  );
  assert.equal(a.text(), "Let me check.Done.");
  // A question no card claims stays open until it is answered elsewhere.
  const q3 = ask();
  a.ask(q3);
  assert.deepEqual(a.openAsks(), [q3]);
  q3.answer("Deny");
  assert.deepEqual(a.openAsks(), []);
});

test("an edit's review goes on its own card (by id, whichever comes first), never on another call's; the answers map to decisions", () => {
  const a = new StreamingAnswer();
  const update = (id: string, name: string, status: ToolCallUpdate["status"]): ToolCallUpdate => ({ sessionId: "s", id, name, tool: name, arguments: "{}", status });
  const answers: (string | undefined)[] = [];
  const review = (): OpenAsk => {
    const q: OpenAsk = { actions: [ReviewAnswers.accept, ReviewAnswers.acceptAll, ReviewAnswers.reject], answer: (t) => (answers.push(t), a.settled(q)) };
    return q;
  };
  // An MCP question waiting for a card is not paired with an edit's pending card.
  const mcp: OpenAsk = { actions: ["Allow once", "Deny"], answer: (t) => (answers.push(t), a.settled(mcp)) };
  a.ask(mcp);
  a.toolCall(update("e1", "edit_file", "pending"));
  assert.equal(a.askOf("e1"), undefined);
  const r1 = review();
  a.askFor("e1", r1);
  assert.equal(a.askOf("e1"), r1);
  const card = a.view().flatMap((p) => (p.kind === "tool" ? [p.card] : []))[0];
  assert.deepEqual([card.note, card.actions], ["waiting for your review", ["Accept", "Accept all in this turn", "Reject"]]);
  a.toolCall(update("m1", "mcp__t__add", "pending"));
  assert.equal(a.askOf("m1"), mcp);
  // The review before its card: shown once the card comes.
  const r2 = review();
  a.askFor("e2", r2);
  assert.deepEqual(a.openAsks().includes(r2), true);
  a.toolCall(update("e2", "create_file", "pending"));
  assert.equal(a.askOf("e2"), r2);
  // The daemon stopped waiting: the card leaves pending and its review is settled unanswered.
  a.toolCall(update("e1", "edit_file", "declined"));
  assert.deepEqual(answers, [undefined]);
  r2.answer(ReviewAnswers.acceptAll);
  assert.equal(a.askOf("e2"), undefined);
  assert.deepEqual(a.openAsks(), [mcp]);
  assert.deepEqual(
    [ReviewAnswers.accept, ReviewAnswers.acceptAll, ReviewAnswers.reject, undefined, "Allow once"].map(reviewDecision),
    ["accept", "acceptAll", "reject", "reject", "reject"],
  );
});

test("turnsFromMessages: the newest summary marks the last turn it covers, and is not shown as a turn", () => {
  const turns = turnsFromMessages([
    { id: 1, role: "user", content: "Q1", status: "complete" },
    { id: 2, role: "assistant", content: "A1", status: "complete" },
    { id: 3, role: "user", content: "Q2", status: "complete" },
    { id: 4, role: "assistant", content: "A2", status: "complete" },
    { id: 5, role: "user", content: "Q3", status: "complete" },
    // An older summary (of Q1), then a newer one (of Q1 and Q2), each stored after the question of the turn that made it.
    { id: 6, role: "system", content: "S1", status: "complete", summaryOf: { first: 1, last: 2, covered: 2, questions: 1 } },
    { id: 7, role: "assistant", content: "A3", status: "complete" },
    { id: 8, role: "user", content: "Q4", status: "complete" },
    { id: 9, role: "system", content: "S2", status: "complete", summaryOf: { first: 1, last: 4, covered: 4, questions: 2 } },
    { id: 10, role: "assistant", content: "A4", status: "complete" },
  ]);
  assert.deepEqual(
    turns.map((t) => [t.question, t.answer, t.compacted]),
    [
      ["Q1", "A1", undefined],
      ["Q2", "A2", { first: 1, last: 4, covered: 4, questions: 2 }],
      ["Q3", "A3", undefined],
      ["Q4", "A4", undefined],
    ],
  );
  assert.equal(turnsFromMessages([{ id: 1, role: "user", content: "Q", status: "complete" }])[0].compacted, undefined);
});

test("resolveBinary says which paths it tried", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-bin-"));
  const exe = path.join(dir, "ctxls");
  fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
  const plain = path.join(dir, "plain");
  fs.writeFileSync(plain, "", { mode: 0o644 });
  assert.deepEqual(resolveBinary(exe, {}, "/nohome"), { ok: true, path: exe });
  assert.deepEqual(resolveBinary("", { PATH: `/nowhere${path.delimiter}${dir}` }, "/nohome"), { ok: true, path: exe });
  const missing = resolveBinary("/no/such/ctxls", {}, "/nohome");
  assert.equal(missing.ok, false);
  assert.match((missing as any).message, /"\/no\/such\/ctxls" \(setting ctxls.path\) does not exist/);
  assert.match((resolveBinary(plain, {}, "/nohome") as any).message, /is not executable/);
  assert.match((resolveBinary(dir, {}, "/nohome") as any).message, /is a folder/);
  const none = resolveBinary("", { PATH: "/nowhere" }, "/nohome") as any;
  assert.equal(none.ok, false);
  assert.deepEqual(none.tried, ["/nowhere/ctxls", "/nohome/go/bin/ctxls"]);
  assert.match(none.message, /not found on PATH nor in \/nohome\/go\/bin.*set ctxls.path/);
  // go install's folder is found when it is not on PATH.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-home-"));
  fs.mkdirSync(path.join(home, "go", "bin"), { recursive: true });
  fs.copyFileSync(exe, path.join(home, "go", "bin", "ctxls"));
  assert.deepEqual(resolveBinary("", { PATH: "/nowhere" }, home), { ok: true, path: path.join(home, "go", "bin", "ctxls") });
});

test("only the user's files are synced", () => {
  const folders = editorFolders("/u/data/User/globalStorage/ctxls.ctxls", "/u/data/logs/20260101/exthost1/ctxls.ctxls", "/u/ext/ctxls.ctxls-0.1.0");
  assert.deepEqual(folders, ["/u/data", "/u/ext"]);
  assert.equal(isUserFile({ scheme: "file", fsPath: "/u/data/User/settings.json" }, folders), false);
  assert.equal(isUserFile({ scheme: "file", fsPath: "/u/ext/other/package.json" }, folders), false);
  assert.equal(isUserFile({ scheme: "output", fsPath: "/ctxls" }, folders), false);
  assert.equal(isUserFile({ scheme: "untitled", fsPath: "Untitled-1" }, folders), false);
  assert.equal(isUserFile({ scheme: "file", fsPath: "/home/ann/app/main.go" }, folders), true);
  assert.equal(isUserFile({ scheme: "file", fsPath: "/u/database.txt" }, folders), true);
});

test("usageLine: input (cached) and output tokens as people read them; nothing when nothing was reported", () => {
  assert.equal(usageLine({ promptTokens: 1234, completionTokens: 56, cachedTokens: 1000 }), "1,234 in (1,000 cached) · 56 out");
  assert.equal(usageLine({ promptTokens: 10, completionTokens: 2 }), "10 in · 2 out");
  assert.equal(usageLine({ promptTokens: 0, completionTokens: 0 }), undefined);
  assert.equal(usageLine(undefined), undefined);
});

test("turnsFromMessages: a turn's usage is the sum of its answers' (each round of a turn with tool calls)", () => {
  const [t] = turnsFromMessages([
    { id: 1, role: "user", content: "Q", status: "complete" },
    { id: 2, role: "assistant", content: "", status: "complete", toolCalls: [{ id: "c1", name: "read_file", arguments: "{}" }], usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 80 } },
    { id: 3, role: "tool", content: "x", status: "complete", toolCallId: "c1" },
    { id: 4, role: "assistant", content: "A", status: "complete", usage: { promptTokens: 120, completionTokens: 7 } },
  ]);
  assert.deepEqual(t.usage, { promptTokens: 220, completionTokens: 12, cachedTokens: 80 });
  assert.equal(viewTurn(t).usage, "220 in (80 cached) · 12 out");
});

test("instruction chips: the workspace path, a tooltip that says the model gets it with every turn, and whether it is unsaved or cut", () => {
  const rel = (p: string) => path.relative("/w", p);
  assert.deepEqual(instructionChips(undefined, rel), []);
  assert.deepEqual(instructionChips([{ path: "/w/AGENTS.md", bytes: 1234, size: 1234 }], rel), [
    { label: "AGENTS.md", path: "/w/AGENTS.md", title: "AGENTS.md goes to the model at the start of every turn (the project's instructions, at the end of the system prompt): 1,234 bytes.\nClick to open it." },
  ]);
  const cut = "cut: the first 32,700 bytes of its 40,000 shown; instructions files are given up to 32,768 bytes each";
  const [chip] = instructionChips([{ path: "/w/pkg/AGENTS.md", bytes: 32700, size: 40000, unsaved: true, cut }], rel);
  assert.equal(chip.label, "pkg/AGENTS.md");
  assert.deepEqual(chip.title.split("\n").slice(1), ["unsaved: the editor's text is given, with any edits not yet saved.", cut, "Click to open it."]);
});

test("turnFileChip and selectedLines: the chip names the file and the selected lines as the daemon reads them", () => {
  assert.deepEqual(turnFileChip("/w/main.go"), { item: "/w/main.go", label: "main.go", path: "/w/main.go" });
  assert.deepEqual(turnFileChip("/w/main.go", [5, 8]), { item: "/w/main.go:5-8", label: "main.go:5-8", path: "/w/main.go" });
  assert.equal(turnFileChip("/w/main.go", [12, 12]).item, "/w/main.go:12");
  // A selection that ends at the start of a line ends on the line before.
  assert.deepEqual(selectedLines({ line: 4, character: 0 }, { line: 8, character: 0 }), [5, 8]);
  assert.deepEqual(selectedLines({ line: 4, character: 2 }, { line: 4, character: 9 }), [5, 5]);
});

test("ctxls/question on a call's card (by toolCallId, whichever comes first) and on a card of its own; closed, the answers go and the outcome stays", () => {
  const a = new StreamingAnswer();
  const answers: (string | undefined)[] = [];
  const q = (extra: Partial<OpenAsk> = {}): OpenAsk => ({ actions: ["Allow once", "Deny", "Always in this session"], deliberate: ["Always in this session"], answer: (t) => answers.push(t), ...extra });
  // The question before its card.
  const p1 = q({ id: "q1" });
  a.askFor("c1", p1);
  a.toolCall({ sessionId: "s", id: "c1", name: "mcp__t__echo", server: "t", tool: "echo", arguments: "{}", status: "pending" });
  let card = a.view().flatMap((p) => (p.kind === "tool" ? [p.card] : []))[0];
  assert.deepEqual([card.actions, card.deliberate, card.outcome], [["Allow once", "Deny", "Always in this session"], ["Always in this session"], undefined]);
  // A trust question: a card of its own.
  const t1 = q({ id: "q2", message: "Trust the MCP servers of .mcp.json?", actions: ["Trust", "Don't trust"], deliberate: [] });
  a.askAlone(t1);
  assert.equal(a.askById("q2"), t1);
  assert.deepEqual(a.openAsks(), [p1, t1]);
  // Closed: no answers, the outcome; the call's card leaving pending does not answer a closed question.
  a.closed(p1, questionOutcome("deny", [{ id: "allow", title: "Allow once" }, { id: "deny", title: "Deny" }]));
  a.toolCall({ sessionId: "s", id: "c1", name: "mcp__t__echo", server: "t", tool: "echo", arguments: "{}", status: "declined" });
  assert.equal(a.askOf("c1"), undefined);
  a.closed(t1, questionOutcome("timeout", []));
  assert.equal(a.askById("q2"), undefined);
  const parts = a.view();
  card = parts.flatMap((p) => (p.kind === "tool" ? [p.card] : []))[0];
  assert.deepEqual([card.actions, card.outcome, card.statusText], [undefined, "Answered: Deny", "declined"]);
  const own = parts.flatMap((p) => (p.kind === "ask" ? [p.card] : []))[0];
  assert.deepEqual(own, { id: "q2", message: "Trust the MCP servers of .mcp.json?", outcome: "Not answered in time" });
  assert.deepEqual(a.openAsks(), []);
  assert.deepEqual(answers, []);
  assert.equal(questionOutcome("cancelled", []), "Not answered: the turn ended");
});

test("a call cancelled with its turn says so on its card", () => {
  const c = toolCard({ id: "c", name: "mcp__t__slow", server: "t", tool: "slow", arguments: "{}", status: "cancelled" });
  assert.deepEqual([c.status, c.statusText, c.note], ["cancelled", "cancelled", undefined]);
});

test("undo: a turn changed files when an edit_file or create_file card is done; the note says what came of an undo or redo", () => {
  const card = (name: string, status: string) => ({ kind: "tool" as const, card: toolCard({ id: name, name, tool: name, arguments: "{}", status: status as any }) });
  assert.equal(turnChangedFiles({ parts: [card("edit_file", "done")] }), true);
  assert.equal(turnChangedFiles({ parts: [card("create_file", "done")] }), true);
  assert.equal(turnChangedFiles({ parts: [card("edit_file", "declined"), card("read_file", "done")] }), false);
  assert.equal(turnChangedFiles({ parts: [] }), false);
  assert.equal(undoNote({ restored: ["/w/a.go"], left: [] }, false), "Undid changes to a.go");
  assert.equal(
    undoNote({ restored: ["/w/a.go", "/w/b.go"], left: [{ path: "/w/c.go", reason: "it changed since the turn" }] }, false),
    "Undid changes to 2 files · left: c.go (it changed since the turn)",
  );
  assert.equal(undoNote({ restored: [], left: [{ path: "/w/c.go", reason: "it no longer exists" }] }, false), "Undid no change · left: c.go (it no longer exists)");
  assert.equal(undoNote({ restored: ["/w/a.go"], left: null }, true), "Redid changes to a.go");
  // Asking again over turns that changed files names the files in the question.
  const edit = (id: string, path: string, status = "done") => ({ kind: "tool" as const, card: toolCard({ id, name: "edit_file", tool: "edit_file", arguments: JSON.stringify({ path, old_string: "a", new_string: "b" }), status: status as any }) });
  assert.equal(rewindUndoQuestion([{ parts: [edit("1", "/w/calc.ts")] }]), "Also undo the changes to calc.ts made by the turn taken back?");
  assert.equal(
    rewindUndoQuestion([{ parts: [edit("1", "/w/a.ts"), edit("2", "/w/a.ts")] }, { parts: [] }, { parts: [edit("3", "b.ts"), edit("4", "c.ts", "declined")] }]),
    "Also undo the changes to a.ts and b.ts made by the 2 turns taken back?",
  );
  assert.equal(rewindUndoQuestion([{ parts: [edit("1", "a"), edit("2", "b"), edit("3", "c"), edit("4", "d")] }]), "Also undo the changes to a, b and 2 more files made by the turn taken back?");
  assert.equal(rewindUndoQuestion([{ parts: [edit("1", "/w/calc.ts")], undo: { undone: true } }, { parts: [card("read_file", "done")] }]), undefined);
});

test("command cards: run_command's line names the command, its output under the line as it runs and once it ended, the status says how it ended", () => {
  const line = "printf 'line one\\nline two\\n'; echo err >&2; exit 3";
  const call = { id: "r", name: "run_command", tool: "run_command", arguments: JSON.stringify({ command: line }) };
  const pending = toolCard({ ...call, status: "pending" }, ["Allow once", "Deny"]);
  assert.deepEqual([pending.title, pending.args, pending.statusText, pending.note, pending.shell], ["run", line, "waiting", "waiting for your permission", undefined]);
  const running = toolCard({ ...call, status: "running", progress: "line one\nline two\n" });
  assert.deepEqual([running.statusText, running.shell], ["running", "line one\nline two"]);
  assert.equal(toolCard({ ...call, status: "running" }).shell, undefined);
  const failed = toolCard({ ...call, status: "failed", output: "line one\nline two\nerr\n[exit status 3]", summary: "exit status 3" });
  assert.deepEqual([failed.statusText, failed.shell, failed.output], ["failed: exit status 3", "line one\nline two\nerr", "line one\nline two\nerr\n[exit status 3]"]);
  // Stored (a session shown again): how it ended read from the output.
  const [stored] = turnsFromMessages([
    { id: 1, role: "user", content: "run it", status: "done" },
    { id: 2, role: "assistant", content: "", status: "done", toolCalls: [{ id: "r", type: "function", function: { name: "run_command", arguments: JSON.stringify({ command: "true", cwd: "sub" }) } }] },
    { id: 3, role: "tool", content: "(no output)\n[exit status 0]", status: "done", toolCallId: "r" },
  ]);
  const again = viewTurn(stored).parts[0];
  assert.ok(again.kind === "tool");
  assert.deepEqual([again.card.args, again.card.statusText, again.card.shell], ["true in sub", "exit status 0", "(no output)"]);
  const declined = toolCard({ ...call, status: "declined", output: "The user declined to run this command; it did not run." });
  assert.deepEqual([declined.statusText, declined.shell], ["declined", undefined]);
  // Not ctxls's own: an MCP tool of the same name is an ordinary card.
  assert.equal(toolCard({ ...call, name: "mcp__s__run_command", server: "s", status: "done", output: "x" }).title, "s · run_command");
});
