// What a code block's Apply changes in a document, with no dependency on
// vscode (the node tests check it): the replacements it makes (the
// selections, else the cursors, else the whole file), the text they give,
// and how they follow the user's typing while the change waits for review.
import { changedSpan } from "./span";

/** The text in [start, end) of a document (UTF-16 offsets) replaced by text. */
export interface Replacement {
  start: number;
  end: number;
  text: string;
}

/** A selection or a cursor, as offsets (start = end for a cursor). */
export interface Spot {
  start: number;
  end: number;
  /** The spot ends at the start of a line (a selection of whole lines with their break; a cursor in column 0). */
  endsAtLineStart: boolean;
}

/** How much of a file a block that names it must be, in lines, to be taken as its whole new text. */
export const wholeFileShare = 0.8;

/** Lines of a text, a final line break not counted as a line of its own. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  return text.replace(/\r?\n$/, "").split(/\r?\n/).length;
}

/**
 * Whether a block that names a file (```ts app.ts) is that file's whole new
 * text: it is at least four-fifths as long as the file, in lines. A shorter
 * block is a part of it (a function, a few lines) and goes at the cursor.
 */
export function isWholeFile(block: string, fileText: string): boolean {
  return lineCount(block) >= wholeFileShare * lineCount(fileText);
}

/**
 * The block as it goes in at a spot, as a paste would put it: with its
 * final line break where the spot ends at a line's start (whole lines
 * selected, a cursor in column 0), without it inside a line.
 */
export function blockAt(block: string, spot: Spot): string {
  return spot.endsAtLineStart ? block : block.replace(/\r?\n$/, "");
}

/**
 * Apply's replacements in a document without a file named whole: the
 * selections replaced by the block when any is not empty (the empty ones
 * left alone), else the block inserted at each cursor.
 */
export function spotReplacements(block: string, spots: Spot[]): Replacement[] {
  const selected = spots.filter((s) => s.end > s.start);
  const at = selected.length ? selected : spots;
  return at.map((s) => ({ start: s.start, end: s.end, text: blockAt(block, s) }));
}

/** The block as a file's whole new text: one replacement of what differs (the rest, and the cursor, stay put). */
export function wholeFileReplacement(fileText: string, block: string): Replacement {
  const s = changedSpan(fileText, block);
  return { start: s.start, end: s.oldEnd, text: s.text };
}

/** Replacements in document order, none overlapping another (a later overlapping one is dropped). */
export function ordered(reps: Replacement[]): Replacement[] {
  const out: Replacement[] = [];
  for (const r of [...reps].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const last = out[out.length - 1];
    if (last && r.start < last.end) continue;
    out.push(r);
  }
  return out;
}

/** The text with the replacements made. */
export function applyReplacements(text: string, reps: Replacement[]): string {
  let out = "";
  let at = 0;
  for (const r of ordered(reps)) {
    out += text.slice(at, r.start) + r.text;
    at = r.end;
  }
  return out + text.slice(at);
}

/** Where each replacement's new text ends in the text they give, in document order. */
export function endsAfter(reps: Replacement[]): number[] {
  let shift = 0;
  return ordered(reps).map((r) => {
    const end = r.start + shift + r.text.length;
    shift += r.text.length - (r.end - r.start);
    return end;
  });
}

/** A change of the document: [offset, offset + length) replaced by text (a content change of VS Code's). */
export interface DocChange {
  offset: number;
  length: number;
  text: string;
}

/**
 * The replacements after a change the user made to the document while they
 * waited for review: moved by a change before them, kept by one after them;
 * undefined when the change touches text one of them replaces (text typed
 * right at an insertion point goes before the block).
 */
export function followChange(reps: Replacement[], c: DocChange): Replacement[] | undefined {
  const end = c.offset + c.length;
  const delta = c.text.length - c.length;
  const out: Replacement[] = [];
  for (const r of reps) {
    if (end <= r.start) out.push({ ...r, start: r.start + delta, end: r.end + delta });
    else if (c.offset >= r.end) out.push(r);
    else return undefined;
  }
  return out;
}
