// Proposed edits reviewed in a diff editor: the model's (ctxls/reviewEdit)
// and a code block of an answer the user applies to a file. The left side is
// the file's own document (its text now, unsaved edits included; an empty
// side for a new file), the right side the proposed text, served read-only
// by a content provider. Accept, Accept All (the model's edits only) and
// Reject are the diff's editor-title buttons (and commands); the first
// answer wins, from there or from the chat's tool card; closing the diff
// without one rejects. Once answered the diff closes. Applying the edit is
// not done here: the daemon sends workspace/applyEdit for the model's
// edits, the extension applies a code block.
import * as vscode from "vscode";
import { baseName } from "./protocol";

export type Decision = "accept" | "acceptAll" | "reject";

/** The proposed sides' schemes: the model's edits, and code blocks applied from the chat. */
export const ReviewSchemes = { model: "ctxls-proposed", block: "ctxls-apply" } as const;

/** Whether any review is open (the palette shows the review commands only then). */
const contextKey = "ctxls.reviewOpen";

export interface ReviewRequest {
  kind: keyof typeof ReviewSchemes;
  /** The file: its name goes into the proposed side's URI (for its language). */
  path: string;
  /** The left side: the file's document; undefined for a new file (an empty side). */
  original?: vscode.Uri;
  /** The file's text if the edit is accepted. */
  proposed: string;
  /** The diff editor's title. */
  title: string;
}

/** One open review: its decision, and a way to give it from elsewhere (the chat's card, a cancel). */
export interface OpenReview {
  decision: Promise<Decision>;
  answer(d: Decision): void;
}

interface Entry {
  allowAll: boolean;
  seq: number;
  settle(d: Decision): void;
}

export class Reviews implements vscode.Disposable {
  private readonly texts = new Map<string, string>();
  /** The open reviews, by their proposed side's URI. */
  private readonly open = new Map<string, Entry>();
  private readonly subs: vscode.Disposable[] = [];
  private seq = 0;

  constructor() {
    const provider: vscode.TextDocumentContentProvider = { provideTextDocumentContent: (uri) => this.texts.get(uri.toString()) ?? "" };
    this.subs.push(
      vscode.workspace.registerTextDocumentContentProvider(ReviewSchemes.model, provider),
      vscode.workspace.registerTextDocumentContentProvider(ReviewSchemes.block, provider),
      vscode.window.tabGroups.onDidChangeTabs((e) => this.closed(e.closed)),
    );
  }

  /** Opens the diff; its decision is the first answer: a button, answer(), or the diff closed (reject). */
  show(r: ReviewRequest): OpenReview {
    const seq = ++this.seq;
    const scheme = ReviewSchemes[r.kind];
    const name = baseName(r.path);
    const proposed = vscode.Uri.from({ scheme, path: `/${seq}/${name}` });
    const original = r.original ?? vscode.Uri.from({ scheme, path: `/${seq}/new/${name}` });
    const keys = [proposed.toString(), ...(r.original ? [] : [original.toString()])];
    this.texts.set(proposed.toString(), r.proposed);
    if (!r.original) this.texts.set(original.toString(), "");
    let settle!: (d: Decision) => void;
    const decision = new Promise<Decision>((resolve) => {
      let done = false;
      settle = (d) => {
        if (done) return;
        done = true;
        this.open.delete(proposed.toString());
        this.updateContext();
        resolve(d);
        void this.closeDiff(proposed).finally(() => keys.forEach((k) => this.texts.delete(k)));
      };
    });
    this.open.set(proposed.toString(), { allowAll: r.kind === "model", seq, settle });
    this.updateContext();
    vscode.commands.executeCommand("vscode.diff", original, proposed, r.title, { preview: false }).then(undefined, (e) => {
      vscode.window.showErrorMessage(`ctxls: the diff of ${name} could not be shown: ${e?.message ?? e}`);
      settle("reject");
    });
    return { decision, answer: (d) => settle(d) };
  }

  /**
   * Answers a review from a command: the one the command was run on (the
   * editor title's buttons pass the diff's URI), else the active editor's,
   * else the newest. False when none is open.
   */
  decide(arg: unknown, d: Decision): boolean {
    let e = arg instanceof vscode.Uri ? this.open.get(arg.toString()) : undefined;
    if (!e) {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      if (input instanceof vscode.TabInputTextDiff) e = this.open.get(input.modified.toString());
    }
    if (!e) e = [...this.open.values()].sort((a, b) => b.seq - a.seq)[0];
    if (!e) return false;
    e.settle(d === "acceptAll" && !e.allowAll ? "accept" : d);
    return true;
  }

  /** The diff's tab closed: unless another group still shows it (a moved tab), that is a rejection. */
  private closed(tabs: readonly vscode.Tab[]): void {
    for (const t of tabs) {
      if (!(t.input instanceof vscode.TabInputTextDiff)) continue;
      const key = t.input.modified.toString();
      const e = this.open.get(key);
      if (!e) continue;
      setTimeout(() => {
        if (this.open.get(key) === e && this.tabs(key).length === 0) e.settle("reject");
      }, 100);
    }
  }

  private tabs(key: string): vscode.Tab[] {
    return vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === key);
  }

  private async closeDiff(proposed: vscode.Uri): Promise<void> {
    const tabs = this.tabs(proposed.toString());
    if (tabs.length) await vscode.window.tabGroups.close(tabs).then(undefined, () => undefined);
  }

  private updateContext(): void {
    void vscode.commands.executeCommand("setContext", contextKey, this.open.size > 0);
  }

  dispose(): void {
    for (const e of [...this.open.values()]) e.settle("reject");
    this.subs.forEach((s) => s.dispose());
  }
}
