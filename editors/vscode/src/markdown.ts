// Markdown for the chat view, rendered in the extension host with
// markdown-it (no dependency on vscode): raw HTML in the text is shown as
// text, never interpreted; code blocks get a copy button; links keep their
// target in data-href for the view's script to route through the extension
// (webviews cannot open files or external pages themselves). Code blocks
// with a language highlight.js knows are highlighted here too: the view gets
// spans with hljs-* classes, which markdown.css colours from the theme.
import MarkdownIt from "markdown-it";
import hljs from "highlight.js/lib/common";

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

// Code blocks: a header with the language and the block's actions: Insert
// (at the cursor of the editor you last worked in), Apply (in place of its
// selection, else at its cursor, or the whole file a block names when it is
// about as long as the file; reviewed as a diff in the ask mode:
// codeblocks.ts) and Copy. The actions take the block's own text, read by
// the view's script from the <code>; a file the block's info string names
// (```ts src/app.ts) goes to Apply as data-file.
md.renderer.rules.fence = (tokens, idx) => {
  const t = tokens[idx];
  const { lang, file } = fenceInfo(t.info);
  const langLabel = `<span class="lang">${md.utils.escapeHtml(lang)}</span>`;
  const button = (cls: string, label: string, title: string, extra = "") =>
    `<button class="${cls}" type="button" title="${title}" aria-label="${title}"${extra}>${label}</button>`;
  return (
    `<div class="code-block"><div class="code-head">${langLabel}<span class="code-actions">` +
    button("code-action insert", "Insert", "Insert at cursor") +
    button("code-action apply", "Apply", "Apply in the editor: in place of the selection, else at the cursor (reviewed as a diff in the ask mode)", file ? ` data-file="${md.utils.escapeHtml(file)}"` : "") +
    button("copy", "Copy", "Copy code") +
    `</span></div><pre><code${lang ? ` class="language-${md.utils.escapeHtml(lang)}"` : ""}>${highlight(t.content, lang)}</code></pre></div>\n`
  );
};

// Longer blocks are shown as plain text: highlighting runs on every render
// of a streaming answer.
const maxHighlight = 100_000;

/**
 * A block's text as HTML: highlighted when highlight.js knows its language
 * (by name or alias: ts, go, py, sh, ...), escaped plain text otherwise. No
 * guessing a block without a language: a wrong guess colours prose.
 */
export function highlight(code: string, lang: string): string {
  if (lang && code.length <= maxHighlight && hljs.getLanguage(lang)) {
    try {
      return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } catch {
      // Shown plain below.
    }
  }
  return md.utils.escapeHtml(code);
}
md.renderer.rules.code_block = md.renderer.rules.fence;

/**
 * A fence's info string: its language, and the file it names, if any: a
 * second word that looks like a path (```ts src/app.ts), or
 * path=/file=/title= (quoted or not).
 */
export function fenceInfo(info: string): { lang: string; file?: string } {
  const words = info.trim().split(/\s+/).filter(Boolean);
  let lang = words[0] ?? "";
  let file: string | undefined;
  // ```app.ts alone: a file name, its extension the language.
  if (/^[\w-]+(\.[\w-]+)*\.\w+$/.test(lang)) {
    file = lang;
    lang = lang.slice(lang.lastIndexOf(".") + 1);
  }
  for (const w of words.slice(1)) {
    const kv = /^(?:path|file|title|filename)=["']?([^"']+)["']?$/i.exec(w);
    if (kv) file = kv[1];
    else if (!file && /[./\\]/.test(w) && !/[{}()=]/.test(w)) file = w.replace(/^["']|["']$/g, "");
  }
  return file ? { lang, file } : { lang };
}

/** Renders Markdown to HTML that is safe to put into the chat view. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** Escapes text for HTML. */
export function escapeHtml(s: string): string {
  return md.utils.escapeHtml(s);
}
