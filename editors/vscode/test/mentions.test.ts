// The files a question mentions (mentions.ts), as the daemon reads them: no VS Code or daemon needed.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { mentionedFiles, sentWith } from "../src/mentions";

const files = new Set(["/w/auth/login.go", "/w/main.go", "/w/.git/config", "/v/x.go"]);
const exists = (p: string) => files.has(p);

test("mentions at the start or after a space name workspace files, with their lines; punctuation after them is the sentence's", () => {
  assert.deepEqual(mentionedFiles("@auth/login.go: why? see @main.go:5-8, and @main.go again", ["/w"], exists), [
    { label: "auth/login.go", path: "/w/auth/login.go" },
    { label: "main.go:5-8", path: "/w/main.go" },
  ]);
  // Not after a letter (an address), not a missing file, not .git, not outside the folders.
  assert.deepEqual(mentionedFiles("mail me@main.go, @nope.go @.git/config @/v/x.go", ["/w"], exists), []);
  assert.deepEqual(mentionedFiles("@/w/main.go", ["/w"], exists), [{ label: "/w/main.go", path: "/w/main.go" }]);
  assert.deepEqual(mentionedFiles("@main.go", [], exists), []);
});

test("a question's files: the turn's first, then its mentions, each once", () => {
  const rel = (p: string) => p.replace(/^\/w\//, "");
  assert.deepEqual(sentWith(["/w/main.go:5-8"], "and @auth/login.go with @main.go", ["/w"], rel, exists), [
    { label: "main.go:5-8", path: "/w/main.go" },
    { label: "auth/login.go", path: "/w/auth/login.go" },
  ]);
});
