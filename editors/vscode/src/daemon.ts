// Finding the ctxls binary, with no dependency on vscode: the extension says
// exactly which paths it tried before starting the daemon, instead of the
// language client's "couldn't create connection to server".
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { disconnected } from "./protocol";

export type Resolution = { ok: true; path: string } | { ok: false; message: string; tried: string[] };

function executable(p: string): "ok" | "missing" | "directory" | "not executable" {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return "missing";
  }
  if (st.isDirectory()) return "directory";
  try {
    fs.accessSync(p, fs.constants.X_OK);
  } catch {
    return "not executable";
  }
  return "ok";
}

/**
 * Resolves the daemon binary from the ctxls.path setting (a path, ~ allowed,
 * or a bare name looked up on PATH), else `ctxls` on PATH, else Go's install
 * folder ($GOBIN, $GOPATH/bin, ~/go/bin), where `go install ./cmd/ctxls` puts
 * it even when that folder is not on the editor's PATH.
 */
export function resolveBinary(setting: string, env: Record<string, string | undefined>, home: string): Resolution {
  const tried: string[] = [];
  const onPath = (name: string): string | undefined => {
    for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
      const p = path.join(dir, name);
      tried.push(p);
      if (executable(p) === "ok") return p;
    }
    return undefined;
  };
  const s = setting.trim();
  if (s) {
    const expanded = s === "~" || s.startsWith("~/") ? path.join(home, s.slice(1)) : s;
    if (!expanded.includes("/") && !expanded.includes("\\")) {
      const found = onPath(expanded);
      if (found) return { ok: true, path: found };
      return { ok: false, tried, message: `ctxls: the setting ctxls.path is "${s}", which was not found on PATH (${env.PATH ?? ""}). Set ctxls.path to the full path of the ctxls binary.` };
    }
    const p = path.resolve(expanded);
    tried.push(p);
    const why = executable(p);
    if (why === "ok") return { ok: true, path: p };
    const what = why === "missing" ? "does not exist" : why === "directory" ? "is a folder, not the ctxls binary" : "is not executable (chmod +x it)";
    return { ok: false, tried, message: `ctxls: the daemon could not be started: "${p}" (setting ctxls.path) ${what}. Set ctxls.path to the ctxls binary (go install ./cmd/ctxls puts it in ~/go/bin).` };
  }
  const found = onPath("ctxls");
  if (found) return { ok: true, path: found };
  const goBins = [env.GOBIN, ...(env.GOPATH ?? "").split(path.delimiter).filter(Boolean).map((g) => path.join(g, "bin")), path.join(home, "go", "bin")].filter(
    (d): d is string => !!d,
  );
  for (const dir of goBins) {
    const p = path.join(dir, "ctxls");
    if (tried.includes(p)) continue;
    tried.push(p);
    if (executable(p) === "ok") return { ok: true, path: p };
  }
  return {
    ok: false,
    tried,
    message: `ctxls: the daemon could not be started: "ctxls" was not found on PATH nor in ${goBins.join(", ")}. Install it (go install ./cmd/ctxls) or set ctxls.path to the binary.`,
  };
}

/**
 * Whether the program at p is ctxls: `p version` prints "ctxls …" within a
 * few seconds. Undefined when it is; else why not, for a message that
 * names the setting ("it printed …", "it exited with code 1", "it did not
 * answer within 5 s"), instead of the language client's "write EPIPE".
 */
export function notCtxls(p: string, timeoutMs = 5000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(p, ["version"], { timeout: timeoutMs, maxBuffer: 64 * 1024, env: process.env }, (err, stdout) => {
      const out = String(stdout ?? "");
      if (!err && out.startsWith("ctxls ")) return resolve(undefined);
      const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: number | string; signal?: string }) | null;
      if (e?.killed || e?.signal === "SIGTERM") return resolve(`it did not answer \`version\` within ${timeoutMs / 1000} s`);
      if (e && typeof e.code === "string") return resolve(`it could not be run (${e.code})`);
      const first = out.trim().split("\n")[0]?.slice(0, 80);
      if (e && typeof e.code === "number") return resolve(`it exited with code ${e.code}` + (first ? ` after printing "${first}"` : "") + " when asked its version");
      return resolve(first ? `it printed "${first}" when asked its version` : "it printed nothing when asked its version");
    });
  });
}

/** What the user is told when the daemon went away while a request of theirs waited (instead of vscode-jsonrpc's "Pending response rejected since connection got disposed"). */
export const daemonGoneText =
  "the ctxls daemon stopped before it answered. It starts again when you send a question (or now with Restart in the chat); the ctxls output channel may say why it stopped.";

/** Under a turn whose answer the daemon's end cut short (marked interrupted). */
export const daemonGoneDuringTurn =
  "The ctxls daemon stopped while answering; what came so far is kept. It starts again when you send your next question (or now with Restart above); Retry asks this one again.";

/** An error as the user is told it: the daemon gone in these words, else its message without "ctxls: ". */
export function errorText(e: any): string {
  if (disconnected(e)) return daemonGoneText;
  return String(e?.message ?? e).replace(/^ctxls:\s*/, "");
}
