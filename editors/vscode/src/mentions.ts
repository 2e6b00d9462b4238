// `@file` mentions in the chat's input. The page (media/mentions.js) opens
// a completion list after "@" and asks for the files matching what follows
// it; the daemon answers (ctxls.workspace.files) and parses the mentions of
// a question it is sent: nothing more goes with the message. Here: the
// query for the list, and the files a question mentions, to list under it
// as the daemon takes them (a question shown again after a reload too). No
// dependency on vscode.
import * as fs from "node:fs";
import * as path from "node:path";

/** The files the list shows at most. */
export const mentionLimit = 30;

/** "@PATH" at the start of a message or after white space (the daemon's rule, service/mentions.go). */
const mention = /(?:^|\s)@(\S+)/g;
const lineRange = /^(.+):([1-9][0-9]*)(?:-([1-9][0-9]*))?$/;

/** A file a question mentions, as shown under it: its path as typed (with its lines), and where it is. */
export interface MentionedFile {
  label: string;
  path: string;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The absolute paths a mention's PATH may name: itself, or under each workspace folder (or the one its first part names). */
function candidates(name: string, roots: string[]): string[] {
  if (path.isAbsolute(name)) return [path.normalize(name)];
  const out = roots.map((r) => path.join(r, name));
  const slash = name.indexOf("/");
  if (roots.length > 1 && slash > 0) {
    for (const r of roots) if (path.basename(r) === name.slice(0, slash)) out.push(path.join(r, name.slice(slash + 1)));
  }
  return out;
}

function inside(p: string, roots: string[]): boolean {
  return roots.some((r) => {
    const rel = path.relative(r, p);
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  });
}

/**
 * The files a question mentions ("@auth/login.go", "@main.go:5-8"), each
 * once, in order: those that name a file inside a workspace folder, with
 * the sentence's trailing punctuation left out as the daemon does. exists
 * is for tests.
 */
export function mentionedFiles(text: string, roots: string[], exists: (p: string) => boolean = isFile): MentionedFile[] {
  const out: MentionedFile[] = [];
  if (!text.includes("@") || roots.length === 0) return out;
  for (const m of text.matchAll(mention)) {
    const raw = m[1];
    for (const typed of [raw, raw.replace(/[.,;:!?)\]}'"]+$/, "")]) {
      const r = lineRange.exec(typed);
      const name = r ? r[1] : typed;
      const found = candidates(name, roots).find((p) => inside(p, roots) && !p.split(path.sep).includes(".git") && exists(p));
      if (found) {
        if (!out.some((f) => f.path === found)) out.push({ label: typed, path: found });
        break;
      }
    }
  }
  return out;
}

/** A path the list offers: one a mention can name (no white space in it: the mention would end there). */
export function mentionable(p: string): boolean {
  return !/\s/.test(p);
}

/**
 * What a question is sent with, as listed under it: the turn's files (the
 * chip's: "/w/main.go:5-8"), labelled by relative(path) and their lines,
 * then the files it mentions; each file once.
 */
export function sentWith(items: string[], message: string, roots: string[], relative: (p: string) => string, exists?: (p: string) => boolean): MentionedFile[] {
  const out: MentionedFile[] = [];
  for (const item of items) {
    const r = lineRange.exec(item);
    const p = r ? r[1] : item;
    if (!out.some((f) => f.path === p)) out.push({ label: relative(p) + (r ? item.slice(p.length) : ""), path: p });
  }
  for (const f of mentionedFiles(message, roots, exists)) if (!out.some((o) => o.path === f.path)) out.push(f);
  return out;
}
