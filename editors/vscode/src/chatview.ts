// The chat view's HTML, with no dependency on vscode: the extension shows it
// in a webview; the tests render it headless.

export interface ChatTurn {
  question: string;
  answer: string;
  status?: string;
}

function escape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Minimal Markdown: fenced code, inline code, bold, paragraphs. */
export function markdownToHtml(md: string): string {
  const parts = md.split(/```[a-zA-Z0-9]*\n?/);
  return parts
    .map((part, i) => {
      if (i % 2 === 1) return `<pre><code>${escape(part)}</code></pre>`;
      return escape(part)
        .split(/\n{2,}/)
        .filter((p) => p.trim() !== "")
        .map((p) => `<p>${p.replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\*\*([^*]+)\*\*/g, "<b>$1</b>").replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<a href="$2">$1</a>').replace(/_\(([^)]+)\)_/g, "<i>($1)</i>").replace(/\n/g, "<br>")}</p>`)
        .join("");
    })
    .join("");
}

export function renderChat(title: string, turns: ChatTurn[], contextHtml = ""): string {
  const body = turns
    .map(
      (t) => `<div class="turn"><div class="q">${escape(t.question)}</div><div class="a">${markdownToHtml(t.answer)}${
        t.status ? `<div class="status">${escape(t.status)}</div>` : ""
      }</div></div>`,
    )
    .join("\n");
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">
<style>
body { font-family: var(--vscode-font-family, system-ui, sans-serif); font-size: 13px; color: var(--vscode-foreground, #ccc); background: var(--vscode-editor-background, #1e1e1e); margin: 0; padding: 12px 16px; }
h1 { font-size: 15px; margin: 0 0 12px; padding-bottom: 8px; border-bottom: 1px solid #444; }
.context { font-size: 12px; opacity: .85; margin-bottom: 12px; }
.turn { margin-bottom: 16px; }
a { color: #4daafc; text-decoration: none; }
.q { background: #2d3a4a; padding: 8px 10px; border-radius: 6px; white-space: pre-wrap; }
.a { padding: 4px 10px; }
pre { background: #111; padding: 8px; border-radius: 4px; overflow-x: auto; }
code { font-family: var(--vscode-editor-font-family, monospace); }
.status { font-style: italic; opacity: .7; }
</style></head><body>
<h1>${escape(title)}</h1>
<div class="context">${contextHtml}</div>
${body}
</body></html>`;
}
