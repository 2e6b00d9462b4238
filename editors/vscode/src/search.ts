// The model's searches of the workspace (ctxls's grep, find_files and
// list_directory tools) as the chat shows them: what each looked for, what
// it found in a few words, and its results as lines the user can follow.
// No dependency on the vscode module (the node tests use it).
//
// grep's output is ripgrep's: matching lines "path:LINE: text" (one only in
// the editor's unsaved text ends with "  (unsaved)"), context lines
// "path-LINE- text", "--" between groups, a blank line between files, maybe
// a last "[N more matches in M files not shown: …]". find_files gives a
// path a line, list_directory an entry a line (folders end with "/"). The
// paths are relative to the workspace folder; with several, they start with
// the folder's name.
import * as path from "node:path";

/** ctxls's own tools that search the workspace. */
export const searchTools: ReadonlySet<string> = new Set(["grep", "find_files", "list_directory"]);

/** Whether a call is one of ctxls's searches (an MCP server's tool never is). */
export function isSearch(c: { name: string; server?: string }): boolean {
  return !c.server && searchTools.has(c.name);
}

function args(json: string): Record<string, unknown> {
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/**
 * What a search looked for, for its card's line: grep's pattern (and "in
 * PATH", "(GLOB)"), find_files' glob, list_directory's folder ("." for the
 * workspace).
 */
export function searchLabel(name: string, json: string): string {
  const a = args(json);
  const p = str(a.path);
  if (name === "list_directory") return p ?? ".";
  let s = (str(a.pattern) ?? "").replace(/\s+/g, " ");
  if (p) s += ` in ${p}`;
  const glob = str(a.glob);
  if (name === "grep" && glob) s += ` (${glob})`;
  return s;
}

/** Whether searchLabel says all of a search's arguments (no ignore_case, no context_lines). */
export function searchArgsInLabel(json: string): boolean {
  return Object.keys(args(json)).every((k) => k === "pattern" || k === "path" || k === "glob");
}

/** A line of grep's results: its file and line, its text, and whether it matched (else context). */
export interface GrepLine {
  path: string;
  line: number;
  text: string;
  match: boolean;
  /** "path:LINE: " or "path-LINE- ": the line's text starts after it. */
  prefix: string;
}

/**
 * Reads a line of grep's output, or undefined for anything else ("--", a
 * blank line, a note). Of the two forms the one whose "path:LINE:" prefix
 * ends first wins: a match's text may hold "-12- ", a context line's ":12: ".
 */
export function parseGrepLine(l: string): GrepLine | undefined {
  const m = /^(.+?):(\d+): /.exec(l);
  const c = /^(.+?)-(\d+)- /.exec(l);
  const pick = m && (!c || m[0].length <= c[0].length) ? m : c;
  if (!pick) return undefined;
  return { path: pick[1], line: Number(pick[2]), text: l.slice(pick[0].length), match: pick === m, prefix: pick[0] };
}

function lines(output: string): string[] {
  return output.replace(/\n$/, "").split("\n");
}

/** n as the daemon writes it: 12,345. */
function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function count(n: number, one: string, many: string): string {
  return n === 1 ? `1 ${one}` : `${thousands(n)} ${many}`;
}

/**
 * What a search found, read from its output as the daemon's summary (sent
 * with the live call, not stored) says it: "12 matches in 4 files", "37
 * files", "14 entries"; results cut short say how many there were and how
 * many are shown. Undefined for an output it cannot read (an error).
 */
export function searchSummary(name: string, output: string | undefined): string | undefined {
  if (output === undefined || output.startsWith("error: ")) return undefined;
  const ls = lines(output);
  const moreLine = ls.map((l) => /^\[([\d,]+) more /.exec(l)).find((m) => m);
  const more = moreLine ? Number(moreLine[1].replace(/,/g, "")) : 0;
  if (name === "grep") {
    if (ls[0] === "No matches.") return "no matches";
    let n = 0;
    const files = new Set<string>();
    for (const l of ls) {
      const g = parseGrepLine(l);
      if (g?.match) {
        n++;
        files.add(g.path);
      }
    }
    if (n === 0) return undefined;
    if (more) return `${count(n + more, "match", "matches")} (${thousands(n)} shown)`;
    return `${count(n, "match", "matches")} in ${count(files.size, "file", "files")}`;
  }
  // find_files and list_directory: an item a line up to the first blank line, then the notes.
  if (ls[0] === "No files found.") return "no files";
  if (ls[0] === "(empty)") return "empty";
  const blank = ls.indexOf("");
  const n = blank < 0 ? ls.length : blank;
  const [one, many] = name === "list_directory" ? ["entry", "entries"] : ["file", "files"];
  if (more) return `${count(n + more, one, many)} (${thousands(n)} shown)`;
  return count(n, one, many);
}

/**
 * A line of a search's results as the opened card shows it: grep's match
 * and context lines and find_files' paths lead to their file (and line);
 * anything else ("--", a note) is text.
 */
export interface ResultLine {
  kind: "match" | "context" | "file" | "text";
  text: string;
  /** The file, as the result names it (relative to the workspace). */
  path?: string;
  /** 1-based; absent for a file. */
  line?: number;
  /** The "path:LINE: " part of a grep line, shown as its link. */
  prefix?: string;
}

/** A search's output as lines to follow (undefined: shown as plain text). */
export function resultLines(name: string, output: string | undefined): ResultLine[] | undefined {
  if (output === undefined || output.startsWith("error: ") || name === "list_directory") return undefined;
  const out: ResultLine[] = [];
  let files = name === "find_files";
  for (const l of lines(output)) {
    if (name === "grep") {
      const g = parseGrepLine(l);
      out.push(g ? { kind: g.match ? "match" : "context", text: l, path: g.path, line: g.line, prefix: g.prefix } : { kind: "text", text: l });
    } else {
      if (l === "" || l === "No files found.") files = false;
      out.push(files ? { kind: "file", text: l, path: l } : { kind: "text", text: l });
    }
  }
  return out;
}

/**
 * The file a result's path names: an absolute path as it is; with one
 * workspace folder, under it; with several, under the folder whose name
 * starts it (the daemon names them so), else under the first. Undefined
 * without a workspace folder.
 */
export function resolveResultPath(p: string, folders: string[]): string | undefined {
  if (path.isAbsolute(p)) return p;
  if (folders.length > 1) {
    const [head, ...rest] = p.split("/");
    const f = folders.find((x) => path.basename(x) === head);
    if (f) return path.join(f, ...rest);
  }
  return folders.length ? path.join(folders[0], p) : undefined;
}
