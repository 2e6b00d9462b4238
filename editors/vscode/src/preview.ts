// Preview Prompt's documents: the exact input the model would get for a
// question, as the daemon computed it (ctxls/chat's preview), in Markdown,
// shown read-only. Nothing is sent or stored.
import * as vscode from "vscode";
import { ChatPreviewResult } from "./protocol";

/** Read-only documents for Preview Prompt (a content provider's documents cannot be edited). */
export class PreviewDocs implements vscode.TextDocumentContentProvider {
  static readonly scheme = "ctxls-preview";
  private docs = new Map<string, string>();
  private seq = 0;
  add(text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: PreviewDocs.scheme, path: `/Prompt preview ${++this.seq}.md` });
    this.docs.set(uri.toString(), text);
    return uri;
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? "";
  }
}

/** A file the daemon named (absolute, maybe with :N or :N-M) as the workspace names it: `app.ts:1-3`. */
function fileLabel(item: string): string {
  const m = /^(.*?)(:\d+(?:-\d+)?)?$/.exec(item)!;
  return `\`${vscode.workspace.asRelativePath(m[1])}${m[2] ?? ""}\``;
}

/**
 * The preview as Markdown: token counts and what goes with the question
 * (its own files, as the daemon named them; the context's files; pasted
 * images, which a preview does not hold), then each message and the tools.
 */
export function previewMarkdown(p: ChatPreviewResult, message: string, also: { contextFiles?: string[]; images?: number } = {}): string {
  const t = p.tokens;
  const lines = [
    `# Prompt preview: ${message.split("\n")[0]}`,
    "",
    `Model \`${p.model}\`. Tokens: system ${t.system}, history ${t.history}, files ${t.files}, total ${t.total} of a budget of ${p.budget}` +
      (p.dropped ? `; ${p.dropped} earlier messages not sent.` : "."),
    "Nothing was sent or stored.",
    "",
    p.files?.length ? `With this question: ${p.files.map(fileLabel).join(", ")}.` : "No file of its own goes with this question.",
  ];
  const ctx = also.contextFiles ?? [];
  if (ctx.length) lines.push(`The context's ${ctx.length === 1 ? "file goes" : "files go"} too: ${ctx.map(fileLabel).join(", ")}.`);
  const n = also.images ?? 0;
  if (n) lines.push(`${n === 1 ? "The pasted image goes" : `The ${n} pasted images go`} with it too (not shown here: an image is stored only when the question is sent).`);
  // The project's instructions files end the system message: named here,
  // their text is below in it.
  if (p.instructions?.length) {
    const named = p.instructions.map((f) => `\`${vscode.workspace.asRelativePath(f.path)}\` (${f.bytes.toLocaleString("en-US")} bytes${f.cut ? `; ${f.cut}` : ""})`);
    lines.push(`Project instructions, at the end of the system message: ${named.join(", ")}.`);
  }
  for (const m of p.messages) {
    lines.push("", `## ${m.role}${m.toolCallId ? ` (tool result ${m.toolCallId})` : ""}`, "", m.content);
    for (const c of m.toolCalls ?? []) lines.push("", `Tool call \`${c.name}\` ${c.arguments}`);
  }
  if (p.tools.length) {
    lines.push("", "## Tools offered", "");
    for (const tool of p.tools) lines.push(`- \`${tool.name}\`: ${tool.description}`);
  }
  return lines.join("\n") + "\n";
}
