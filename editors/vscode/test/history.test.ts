// The chat input's history (history.ts): no VS Code or daemon needed.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { InputHistory, historyMaxChars, remember } from "../src/history";

test("a question is kept once when sent twice in a row; blank and huge ones are not kept; the oldest go first", () => {
  assert.deepEqual(remember([], "a"), ["a"]);
  assert.deepEqual(remember(["a"], "a"), ["a"]);
  assert.deepEqual(remember(["a", "b"], "a"), ["a", "b", "a"]);
  assert.deepEqual(remember(["a"], "  \n"), ["a"]);
  assert.deepEqual(remember(["a"], "x".repeat(historyMaxChars + 1)), ["a"]);
  assert.deepEqual(remember(["a", "b", "c"], "d", 3), ["b", "c", "d"]);
});

test("the history is read back from the store, whatever else it holds", async () => {
  const data = new Map<string, unknown>();
  const store = { get: <T>(k: string) => data.get(k) as T | undefined, update: async (k: string, v: unknown) => void data.set(k, v) };
  const h = new InputHistory(store);
  assert.deepEqual(h.list(), []);
  await h.add("first");
  await h.add("second");
  assert.deepEqual(new InputHistory(store).list(), ["first", "second"]);
  data.set("ctxls.inputHistory", ["ok", 3, null]);
  assert.deepEqual(h.list(), ["ok"]);
});
