// What a code block's Apply changes (apply.ts): no VS Code or daemon needed.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { applyReplacements, endsAfter, followChange, isWholeFile, lineCount, spotReplacements, wholeFileReplacement } from "../src/apply";

const file = "export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport const answer = add(40, 2);\n";
const fn = "export function add(a: number, b: number): number {\n  return a * b;\n}\n";

test("a block that names a file is its whole new text only when it is about as long as the file", () => {
  assert.equal(lineCount(""), 0);
  assert.equal(lineCount("a\n"), 1);
  assert.equal(lineCount("a\nb"), 2);
  assert.equal(lineCount(file), 5);
  // A function of the file (3 of its 5 lines): a part, not the file.
  assert.equal(isWholeFile(fn, file), false);
  // The file rewritten (4 of 5 lines, or more): the whole file.
  assert.equal(isWholeFile(fn + "export const answer = add(40, 2);\n", file), true);
  assert.equal(isWholeFile(file + "// more\n", file), true);
  // An empty file takes any block whole.
  assert.equal(isWholeFile("x\n", ""), true);
  // As one replacement of what differs: the rest stays put.
  const r = wholeFileReplacement(file, fn + "\nexport const answer = add(40, 2);\n");
  assert.deepEqual(r, { start: file.indexOf("+ b"), end: file.indexOf("+ b") + 1, text: "*" });
});

test("Apply replaces the selections, else inserts at the cursors, as a paste would", () => {
  const block = "const x = 1;\n";
  // Whole lines selected (the selection ends at a line's start): the block keeps its line break.
  const lines = spotReplacements(block, [{ start: 0, end: file.indexOf("\n}") + 3, endsAtLineStart: true }]);
  assert.equal(applyReplacements(file, lines), "const x = 1;\n\nexport const answer = add(40, 2);\n");
  // A selection inside a line: without it; an empty selection beside a non-empty one is left alone.
  const word = file.indexOf("answer");
  const inLine = spotReplacements(block, [{ start: 0, end: 0, endsAtLineStart: true }, { start: word, end: word + 6, endsAtLineStart: false }]);
  assert.deepEqual(inLine, [{ start: word, end: word + 6, text: "const x = 1;" }]);
  // No selection: at the cursor; in column 0 the block comes with its line break.
  const blank = file.indexOf("\n\n") + 1;
  assert.equal(applyReplacements(file, spotReplacements(block, [{ start: blank, end: blank, endsAtLineStart: true }])), file.slice(0, blank) + block + file.slice(blank));
  assert.equal(applyReplacements("ab", spotReplacements(block, [{ start: 1, end: 1, endsAtLineStart: false }])), "aconst x = 1;b");
  // Several cursors: at each; where each insertion ends afterwards.
  const two = spotReplacements("X\n", [{ start: 4, end: 4, endsAtLineStart: false }, { start: 1, end: 1, endsAtLineStart: false }]);
  assert.equal(applyReplacements("abcdef", two), "aXbcdXef");
  assert.deepEqual(endsAfter(two), [2, 6]);
});

test("the replacements follow the typing while they wait for review; typing in what they replace stops them", () => {
  const reps = [{ start: 10, end: 20, text: "new" }];
  // Typed before: moved; after: kept; at the start of an insertion point: the block goes after it.
  assert.deepEqual(followChange(reps, { offset: 0, length: 0, text: "abc" }), [{ start: 13, end: 23, text: "new" }]);
  assert.deepEqual(followChange(reps, { offset: 2, length: 5, text: "" }), [{ start: 5, end: 15, text: "new" }]);
  assert.deepEqual(followChange(reps, { offset: 20, length: 3, text: "x" }), reps);
  assert.deepEqual(followChange([{ start: 5, end: 5, text: "B" }], { offset: 5, length: 0, text: "t" }), [{ start: 6, end: 6, text: "B" }]);
  // Inside the selection replaced, or across its edge: no longer what was reviewed.
  assert.equal(followChange(reps, { offset: 15, length: 0, text: "x" }), undefined);
  assert.equal(followChange(reps, { offset: 8, length: 4, text: "" }), undefined);
  assert.equal(followChange([{ start: 5, end: 5, text: "B" }], { offset: 3, length: 4, text: "" }), undefined);
});
