// Which documents the daemon is told about, with no dependency on vscode:
// only the user's files on disk. The editor's own documents (its settings.json
// and other files in the user-data folder, extensions, logs, output channels,
// git views, untitled scratch buffers) are neither synced nor offered to the
// model.
import * as path from "node:path";

/** The part of a vscode.Uri this needs. */
export interface UriLike {
  scheme: string;
  fsPath: string;
}

function inside(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel === "" || (!!rel && !rel.startsWith("..") && !path.isAbsolute(rel));
}

/** True for a file on disk outside the editor's own folders. */
export function isUserFile(uri: UriLike, editorFolders: readonly string[]): boolean {
  if (uri.scheme !== "file") return false;
  return !editorFolders.some((d) => d && inside(uri.fsPath, d));
}

/**
 * The editor's own folders from an extension's storage locations:
 * globalStorage is <userData>/User/globalStorage/<id>, logs are
 * <userData>/logs/<session>/…, and the extension sits in the extensions folder.
 */
export function editorFolders(globalStorage: string, logPath: string, extensionPath: string): string[] {
  const out = new Set<string>();
  const g = path.normalize(globalStorage);
  if (path.basename(path.dirname(g)) === "globalStorage") out.add(path.dirname(path.dirname(path.dirname(g))));
  else out.add(path.dirname(g));
  const l = path.normalize(logPath);
  const i = l.split(path.sep).lastIndexOf("logs");
  if (i > 0) out.add(l.split(path.sep).slice(0, i).join(path.sep) || path.sep);
  out.add(path.dirname(path.normalize(extensionPath)));
  return [...out];
}
