// Text changes as one replacement, with no dependency on vscode (the node
// tests check it).

/**
 * The change from old to next as one replacement of old's [start, oldEnd)
 * by text: the common beginning and end left out, so the cursor and the
 * rest of the document stay put. Never splits a UTF-16 surrogate pair.
 */
export function changedSpan(old: string, next: string): { start: number; oldEnd: number; text: string } {
  let start = 0;
  while (start < old.length && start < next.length && old[start] === next[start]) start++;
  if (start > 0 && isHigh(old.charCodeAt(start - 1))) start--;
  let s = 0;
  while (s < old.length - start && s < next.length - start && old[old.length - 1 - s] === next[next.length - 1 - s]) s++;
  if (s > 0 && isLow(old.charCodeAt(old.length - s))) s--;
  return { start, oldEnd: old.length - s, text: next.slice(start, next.length - s) };
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
