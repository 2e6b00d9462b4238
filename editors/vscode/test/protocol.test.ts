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
import { CtxlsClient, ContextChanged, SessionUpdated, turnsFromMessages } from "../src/protocol";
import { renderMarkdown } from "../src/markdown";
import { contextSets } from "../src/viewstate";
import { resolveBinary } from "../src/daemon";
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
        ["Tell me more", "partial ", "interrupted"],
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
    assert.match(preview.messages[0].content, /UNSAVED FROM VSCODE/);
    assert.equal(preview.messages.at(-1)?.content, "And y?");

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

test("markdown: lists, emphasis, code blocks with a copy button; raw HTML stays text", () => {
  const html = renderMarkdown("Steps:\n\n- one\n- _two_\n\n1. **three**\n\n```ts\nconst a = 1 < 2;\n```\n\n<script>alert(1)</script> <b>x</b>\n\n[docs](https://example.com/a) and [file](src/app.ts#L3)");
  assert.match(html, /<ul>\s*<li>one<\/li>\s*<li><em>two<\/em><\/li>\s*<\/ul>/);
  assert.match(html, /<ol>\s*<li><strong>three<\/strong><\/li>\s*<\/ol>/);
  assert.match(html, /<div class="code-block"><div class="code-head"><span class="lang">ts<\/span><button class="copy"[^>]*>Copy<\/button><\/div><pre><code class="language-ts">const a = 1 &lt; 2;\n<\/code><\/pre><\/div>/);
  assert.doesNotMatch(html, /<script|<b>/);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt; &lt;b&gt;x&lt;\/b&gt;/);
  assert.match(html, /<a href="https:\/\/example.com\/a" data-href="https:\/\/example.com\/a"[^>]*>docs<\/a>/);
  assert.match(html, /data-href="src\/app.ts#L3"/);
  // markdown-it refuses script links.
  assert.doesNotMatch(renderMarkdown("[x](javascript:alert(1))"), /href="javascript/);
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

test("turnsFromMessages: tool rounds stay out, failures keep their error", () => {
  const turns = turnsFromMessages([
    { id: 1, role: "user", content: "Q1", status: "complete" },
    { id: 2, role: "assistant", content: "", toolCalls: [{}], status: "complete" },
    { id: 3, role: "tool", content: "{...}", status: "complete" },
    { id: 4, role: "assistant", content: "A1", status: "complete", model: "m" },
    { id: 5, role: "user", content: "Q2", status: "complete" },
    { id: 6, role: "assistant", content: "half\n\nError: the provider said no", status: "error" },
  ]);
  assert.deepEqual(turns, [
    { question: "Q1", questionId: 1, ids: [1, 2, 3, 4], answer: "A1", status: "done", model: "m" },
    { question: "Q2", questionId: 5, ids: [5, 6], answer: "half", status: "error", error: "the provider said no" },
  ]);
});

test("turnsFromMessages: the newest summary marks the last turn it covers, and is not shown as a turn", () => {
  const turns = turnsFromMessages([
    { id: 1, role: "user", content: "Q1", status: "complete" },
    { id: 2, role: "assistant", content: "A1", status: "complete" },
    { id: 3, role: "user", content: "Q2", status: "complete" },
    { id: 4, role: "assistant", content: "A2", status: "complete" },
    { id: 5, role: "user", content: "Q3", status: "complete" },
    // An older summary (of Q1), then a newer one (of Q1 and Q2), each stored after the question of the turn that made it.
    { id: 6, role: "system", content: "S1", status: "complete", summaryOf: { first: 1, last: 2, covered: 2 } },
    { id: 7, role: "assistant", content: "A3", status: "complete" },
    { id: 8, role: "user", content: "Q4", status: "complete" },
    { id: 9, role: "system", content: "S2", status: "complete", summaryOf: { first: 1, last: 4, covered: 4 } },
    { id: 10, role: "assistant", content: "A4", status: "complete" },
  ]);
  assert.deepEqual(
    turns.map((t) => [t.question, t.answer, t.compacted]),
    [
      ["Q1", "A1", undefined],
      ["Q2", "A2", { first: 1, last: 4, covered: 4 }],
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
