// The editor's diagnostics for the model (ctxls/diagnostics): what VS Code
// holds for the Problems panel, every language's, answered to the daemon as
// LSP Diagnostics. With waitMs the answer waits until the diagnostics of the
// files asked about change (a language server has checked an edit) and rest
// settleMs, or waitMs has passed.
import * as vscode from "vscode";
import { Diagnostic, DiagnosticsParams, FileDiagnostics } from "./protocol";

/** LSP's DiagnosticSeverity (1-based) of VS Code's (0-based: Error = 0). */
function severity(s: vscode.DiagnosticSeverity): number {
  switch (s) {
    case vscode.DiagnosticSeverity.Error:
      return 1;
    case vscode.DiagnosticSeverity.Warning:
      return 2;
    case vscode.DiagnosticSeverity.Information:
      return 3;
    default:
      return 4;
  }
}

/** A VS Code diagnostic as LSP's: positions in UTF-16, as VS Code's are (the encoding the client negotiates). */
function toLsp(d: vscode.Diagnostic): Diagnostic {
  const pos = (p: vscode.Position) => ({ line: p.line, character: p.character });
  const out: Diagnostic = { range: { start: pos(d.range.start), end: pos(d.range.end) }, severity: severity(d.severity), message: d.message };
  if (d.source) out.source = d.source;
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  if (code !== undefined && code !== "") out.code = code;
  return out;
}

/** Where a URI is, for comparing the daemon's URIs with VS Code's (which encode differently). */
function key(u: vscode.Uri): string {
  return u.scheme === "file" ? u.fsPath : u.toString();
}

/** The diagnostics of the files asked about (as the daemon spelled them), or of every file VS Code has some for. */
function collect(asked?: string[]): FileDiagnostics[] {
  if (!asked) {
    return vscode.languages
      .getDiagnostics()
      .filter(([u, ds]) => u.scheme === "file" && ds.length > 0)
      .map(([u, ds]) => ({ uri: u.toString(), diagnostics: ds.map(toLsp) }));
  }
  return asked.map((uri) => ({ uri, diagnostics: vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).map(toLsp) }));
}

/**
 * How long the diagnostics must rest after a change before the answer to a
 * waitMs goes: a language server reports in parts (TypeScript's syntax, then
 * its semantics), and one part alone would be answered with the other's old ones.
 */
const settleMs = 300;

/** Answers ctxls/diagnostics; the token ends the wait (the daemon stopped waiting). */
export function answerDiagnostics(p: DiagnosticsParams, token?: { onCancellationRequested(l: () => void): unknown }): Promise<FileDiagnostics[]> {
  const asked = Array.isArray(p?.uris) ? p.uris : undefined;
  const wait = typeof p?.waitMs === "number" && p.waitMs > 0 ? p.waitMs : 0;
  if (!wait) return Promise.resolve(collect(asked));
  const keys = asked && new Set(asked.map((u) => key(vscode.Uri.parse(u))));
  return new Promise((resolve) => {
    let done = false;
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      sub.dispose();
      clearTimeout(timer);
      clearTimeout(quiet);
      resolve(collect(asked));
    };
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (keys && !e.uris.some((u) => keys.has(key(u)))) return;
      clearTimeout(quiet);
      quiet = setTimeout(finish, settleMs);
    });
    const timer = setTimeout(finish, wait);
    token?.onCancellationRequested(finish);
  });
}
