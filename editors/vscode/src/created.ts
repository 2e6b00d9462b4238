// New files the model created (an accepted create_file). The daemon sends
// them as workspace/applyEdit with a CreateFile and an insert; VS Code
// writes the file empty at once and leaves the text unsaved in its buffer,
// as with any edit of the model's. A file the user then throws away (closes
// without saving, reverts, undoes the insert) would stay on the disk as an
// empty file nobody asked for: it is removed here, as long as it is still
// empty and was never saved.
import * as vscode from "vscode";

/** The files a workspace edit (LSP's WorkspaceEdit) creates, as URIs. */
export function createdUris(edit: { documentChanges?: unknown[] } | undefined): string[] {
  const out: string[] = [];
  for (const c of edit?.documentChanges ?? []) {
    const op = c as { kind?: string; uri?: string };
    if (op && op.kind === "create" && typeof op.uri === "string") out.push(op.uri);
  }
  return out;
}

export class CreatedFiles implements vscode.Disposable {
  /** The new files not saved yet, by URI (VS Code's spelling). */
  private files = new Set<string>();
  private subs: vscode.Disposable[];

  constructor() {
    this.subs = [
      vscode.workspace.onDidSaveTextDocument((d) => this.files.delete(d.uri.toString())),
      // Closed without saving (Don't Save): the empty file goes.
      vscode.workspace.onDidCloseTextDocument((d) => {
        const key = d.uri.toString();
        if (!this.files.delete(key)) return;
        void this.removeIfEmpty(d.uri);
      }),
      // Reverted, or the insert undone: the buffer is the empty file again.
      vscode.workspace.onDidChangeTextDocument((e) => {
        const d = e.document;
        if (!this.files.has(d.uri.toString()) || d.isDirty || d.getText() !== "") return;
        void this.removeIfEmpty(d.uri);
      }),
    ];
  }

  /** Files the model's edit created (applied). */
  add(uris: string[]): void {
    for (const u of uris) this.files.add(vscode.Uri.parse(u).toString());
  }

  private async removeIfEmpty(uri: vscode.Uri): Promise<void> {
    try {
      const st = await vscode.workspace.fs.stat(uri);
      if (st.type === vscode.FileType.File && st.size === 0) await vscode.workspace.fs.delete(uri, { useTrash: false });
    } catch {
      // gone already
    }
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
  }
}
