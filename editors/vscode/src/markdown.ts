// Markdown for the chat view, rendered in the extension host with
// markdown-it (no dependency on vscode): raw HTML in the text is shown as
// text, never interpreted; code blocks get a copy button; links keep their
// target in data-href for the view's script to route through the extension
// (webviews cannot open files or external pages themselves).
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });

// Links: the view's script posts data-href to the extension on click. The
// href stays for the status line and accessibility but is never followed by
// the webview itself (the script cancels the default action).
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const href = tokens[idx].attrGet("href") ?? "";
  tokens[idx].attrSet("data-href", href);
  tokens[idx].attrSet("title", href);
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// Code blocks: a header with the language and a copy button. The button's
// code is the block's own text, read by the view's script from the <code>.
md.renderer.rules.fence = (tokens, idx) => {
  const t = tokens[idx];
  const lang = t.info.trim().split(/\s+/)[0] ?? "";
  const langLabel = lang ? `<span class="lang">${md.utils.escapeHtml(lang)}</span>` : "<span class=\"lang\"></span>";
  return (
    `<div class="code-block"><div class="code-head">${langLabel}` +
    `<button class="copy" type="button" title="Copy code" aria-label="Copy code">Copy</button></div>` +
    `<pre><code${lang ? ` class="language-${md.utils.escapeHtml(lang)}"` : ""}>${md.utils.escapeHtml(t.content)}</code></pre></div>\n`
  );
};
md.renderer.rules.code_block = md.renderer.rules.fence;

/** Renders Markdown to HTML that is safe to put into the chat view. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** Escapes text for HTML. */
export function escapeHtml(s: string): string {
  return md.utils.escapeHtml(s);
}
