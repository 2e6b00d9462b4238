// Finding the ctxls binary, with no dependency on vscode: the extension says
// exactly which paths it tried before starting the daemon, instead of the
// language client's "couldn't create connection to server".
import * as fs from "node:fs";
import * as path from "node:path";

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
