// Drives the real ctxls binary over stdio with vscode-jsonrpc through the
// extension's protocol layer. Run by editors/vscode/vscode_test.go, which
// sets CTXLS_BIN and OPENAI_BASE_URL (the in-repo test server).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { CtxlsClient, contextCard, ContextChanged } from "../src/protocol";
import { renderChat, markdownToHtml } from "../src/chatview";

test("chat streams through the protocol layer against the real binary", async () => {
  const bin = process.env.CTXLS_BIN;
  const baseURL = process.env.OPENAI_BASE_URL;
  assert.ok(bin && baseURL, "CTXLS_BIN and OPENAI_BASE_URL must be set");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ctxls-vscode-"));
  const file = path.join(work, "app.ts");
  fs.writeFileSync(file, "export const x = 1;\n");
  const child = spawn(bin!, ["serve", "--data-dir", path.join(work, "data")], { stdio: ["pipe", "pipe", "inherit"] });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const changes: ContextChanged[] = [];
  const titles: string[] = [];
  const ctxls = new CtxlsClient(conn);
  ctxls.onContextChanged((p) => changes.push(p));
  ctxls.onSessionUpdated((p) => titles.push(p.title));
  conn.listen();
  try {
    const init = await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: "file://" + work,
      capabilities: { general: { positionEncodings: ["utf-16"] } },
      initializationOptions: { provider: { baseURL, model: "test-model" } },
    });
    assert.equal((init as any).serverInfo.name, "ctxls");
    await conn.sendNotification("initialized", {});
    const uri = "file://" + file;
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "typescript", version: 1, text: "export const x = 1;\n" } });
    await conn.sendNotification("textDocument/didChange", {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 0 } }, text: "// UNSAVED FROM VSCODE\n" }],
    });
    const set = await ctxls.addFiles([file]);
    assert.deepEqual(set.items, [file]);
    assert.equal(changes.at(-1)?.reason, "changed");
    assert.match(contextCard(changes.at(-1)!), /\[app\.ts\]\(file:\/\/.*app\.ts\)/);

    let streamed = "";
    const res = await ctxls.chat("What is x?", { onDelta: (d) => (streamed += d) });
    assert.equal(res.finishReason, "stop");
    assert.equal(res.text, "x is one.");
    assert.equal(streamed, res.text, "the deltas add up to the answer");

    const { sessions } = await ctxls.list();
    assert.equal(sessions.length, 1);
    const renamed = await ctxls.rename("Explaining x");
    assert.equal(renamed.session.titleSource, "user");
    assert.ok(titles.includes("Explaining x"));

    // Deliberately without the required field: the daemon says what is missing.
    await assert.rejects(ctxls.command("ctxls.session.resume", {} as { sessionId: string }), /sessionId is required/);

    const html = renderChat(renamed.session.title, [{ question: "What is x?", answer: res.text + "\n\n```ts\nexport const x = 1;\n```" }], markdownToHtml(contextCard(changes.at(-1)!)));
    assert.match(html, /<a href="file:\/\/[^"]*app\.ts">app\.ts<\/a>/);
    assert.match(html, /<pre><code>export const x = 1;/);
    if (process.env.CTXLS_CHAT_HTML) fs.writeFileSync(process.env.CTXLS_CHAT_HTML, html);

    await conn.sendRequest("shutdown");
    await conn.sendNotification("exit");
  } finally {
    conn.dispose();
    child.kill();
  }
});
