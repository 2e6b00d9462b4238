// The chat view's one script (loaded with the page's CSP nonce). It draws the
// state the extension sends and posts the user's actions back; it opens
// nothing itself: links, files and the clipboard go through the extension.
// Answer HTML comes from markdown-it in the extension with HTML disabled.
(function () {
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  const title = $("title");
  const mode = $("mode");
  const context = $("context");
  const banner = $("banner");
  const log = $("log");
  const input = $("input");
  const send = $("send");
  const stop = $("stop");
  const form = $("composer");
  const hint = $("hint");
  const turnFile = $("turn-file");
  const model = $("model");
  const usage = $("usage");
  const editing = $("editing");
  const imagesBox = $("images");
  // Images pasted into the input, sent with the next question: { url, label }.
  let images = [];
  const maxImageBytes = 5 * 1024 * 1024;
  let state = null;
  // The turn whose question the input holds for Edit (its index), with the
  // draft the input had before; null when not editing.
  let edit = null;
  let revealed = 0;
  let scrolledTo = undefined;
  // The tool cards the user opened, by id: a whole redraw (a new title, a
  // context change) keeps them open.
  const openCards = new Set();
  // Up and Down in the input: the questions sent before (history.js).
  const history = window.ctxlsHistory(input, (text) => vscode.setState({ draft: text }));
  // "@" opens a list of the workspace's files to mention (mentions.js).
  const mentions = window.ctxlsMentions(
    input,
    $("mentions"),
    (query, seq) => vscode.postMessage({ type: "mentionQuery", query, seq }),
    (text) => vscode.setState({ draft: text }),
  );

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The log follows new text only while the user is at its bottom.
  function atBottom() {
    return log.scrollHeight - log.scrollTop - log.clientHeight < 24;
  }
  function follow(wasAtBottom) {
    if (wasAtBottom) log.scrollTop = log.scrollHeight;
  }
  // When the header or the input grows (a context card, a session file, an
  // image chip) the log gets shorter: a reader at its bottom stays there.
  let atEnd = true;
  log.addEventListener("scroll", () => (atEnd = atBottom()));
  new ResizeObserver(() => atEnd && follow(true)).observe(log);

  function fileLink(label, path, cls) {
    const a = el("button", "link " + (cls || ""), label);
    a.type = "button";
    a.dataset.path = path;
    a.title = path;
    return a;
  }
  // A file in the session folder: the extension finds the folder when it is
  // clicked (the folder is renamed with the session's title).
  function sessionFileLink(f, cls) {
    const a = el("button", "link " + (cls || ""), f.subdir + "/" + f.name);
    a.type = "button";
    a.dataset.subdir = f.subdir;
    a.dataset.name = f.name;
    a.title = "Open " + f.subdir + "/" + f.name + " from the session folder";
    return a;
  }

  function drawContext(s) {
    context.textContent = "";
    const instructions = s.instructions || [];
    if (s.context.length === 0 && s.sessionFiles.length === 0) {
      context.appendChild(el("div", "empty", "No context yet: add files with + above the input or ctxls: Add Current File to Context."));
      drawInstructions(instructions);
      return;
    }
    for (const set of s.context) {
      const row = el("div", "set");
      row.dataset.set = set.name;
      // "applet" is the daemon's word for what the editor shows you (the
      // file and lines the cursor rests on): say so.
      const setName = el("span", "set-name", (set.name === "applet" ? "editor view" : set.name) + ":");
      if (set.name === "applet") setName.title = "What your editor shows (the file and the lines the cursor rests on); goes with each question";
      row.appendChild(setName);
      for (const item of set.items) {
        const chip = el("span", "chip" + (item.missing ? " missing" : ""));
        chip.dataset.value = item.value;
        if (item.path) {
          const a = fileLink(item.label, item.path, "label");
          if (item.missing) a.title = item.path + " (not found)";
          chip.appendChild(a);
        } else {
          chip.appendChild(el("span", "label", item.label));
        }
        const x = el("button", "remove", "×");
        x.type = "button";
        x.title = "Remove " + (item.value === "*" ? item.label : item.value) + " from the context";
        x.setAttribute("aria-label", x.title);
        x.dataset.set = set.name;
        x.dataset.value = item.value;
        chip.appendChild(x);
        row.appendChild(chip);
      }
      context.appendChild(row);
    }
    if (s.sessionFiles.length > 0) {
      const row = el("div", "set session-files");
      row.appendChild(el("span", "set-name", "session files:"));
      for (const f of s.sessionFiles) {
        const chip = el("span", "chip");
        chip.appendChild(sessionFileLink(f, "label"));
        // Files the user copied in (sources/) can be taken out again; what
        // the model wrote (results/, scripts/, data/) stays with its answer.
        if (f.subdir === "sources") {
          const x = el("button", "remove session-file-remove", "×");
          x.type = "button";
          x.title = "Delete sources/" + f.name + " from the session folder (the file it was copied from stays)";
          x.setAttribute("aria-label", x.title);
          x.dataset.name = f.name;
          chip.appendChild(x);
        }
        row.appendChild(chip);
      }
      context.appendChild(row);
    }
    drawInstructions(instructions);
  }

  // The project's instructions files (AGENTS.md, …) the model gets with
  // every turn: a chip each, its workspace path; a click opens it. They are
  // the project's, not the session's: no ×.
  function drawInstructions(list) {
    if (list.length === 0) return;
    const row = el("div", "set instructions");
    const name = el("span", "set-name", "instructions:");
    name.title = "The project's instructions files: the model gets them at the start of every turn (ctxls.projectInstructions turns them off)";
    row.appendChild(name);
    for (const f of list) {
      const chip = el("span", "chip instruction");
      const a = fileLink(f.label, f.path, "label");
      a.title = f.title;
      chip.appendChild(a);
      row.appendChild(chip);
    }
    context.appendChild(row);
  }

  // A tool call's card: one line (state, "server · tool", the arguments
  // shortened, the status) that opens to the arguments and the result. It is
  // updated in place by its id, so an opened card stays open.
  function toolNode(card) {
    const box = el("div", "tool");
    box.dataset.id = card.id;
    const details = el("details");
    details.open = openCards.has(card.id);
    const summary = el("summary");
    summary.appendChild(el("span", "tool-icon"));
    summary.appendChild(el("span", "tool-title"));
    summary.appendChild(el("span", "tool-args"));
    summary.appendChild(el("span", "tool-status"));
    details.appendChild(summary);
    const body = el("div", "tool-body");
    body.appendChild(el("div", "tool-label tool-args-label", "Arguments"));
    body.appendChild(el("pre", "tool-pre tool-args-full"));
    body.appendChild(el("div", "tool-label tool-output-label", "Result"));
    body.appendChild(el("pre", "tool-pre tool-output"));
    details.appendChild(body);
    box.appendChild(details);
    // A command's output, under the line (not folded into the card).
    box.appendChild(el("pre", "tool-pre tool-shell"));
    box.appendChild(el("ul", "tool-plan"));
    box.appendChild(askNode());
    box.appendChild(el("div", "tool-outcome"));
    return box;
  }
  // A question's part of a card: why it waits, the answers, and once the
  // question closed what came of it.
  function askNode() {
    const ask = el("div", "tool-ask");
    ask.appendChild(el("span", "tool-note"));
    ask.appendChild(el("span", "tool-answers"));
    return ask;
  }
  // A question with a card of its own (a workspace's MCP servers to trust).
  function askCardNode(card) {
    const box = el("div", "ask-card");
    box.dataset.qid = card.id;
    box.appendChild(el("span", "ask-message"));
    box.appendChild(askNode());
    box.appendChild(el("div", "tool-outcome"));
    return box;
  }
  function drawAskCard(box, card) {
    box.dataset.open = card.outcome === undefined ? "true" : "false";
    box.querySelector(".ask-message").textContent = card.message;
    drawAsk(box.querySelector(".tool-ask"), "", card.actions, card.deliberate);
    drawOutcome(box, card.outcome);
  }
  // The answers are buttons that never take the keyboard by themselves (a
  // question that comes while the user types elsewhere is not answered by
  // the typing). A deliberate one ("Always in this session") is armed by a
  // first click and sent by a second (see the click handler).
  // Under a question once it closed: what came of it.
  function drawOutcome(box, outcome) {
    const out = box.querySelector(".tool-outcome");
    out.textContent = outcome || "";
    out.hidden = !outcome;
  }
  function drawAsk(ask, note, actions, deliberate) {
    ask.querySelector(".tool-note").textContent = note || "";
    ask.querySelector(".tool-note").hidden = !note;
    const answers = ask.querySelector(".tool-answers");
    const key = (actions || []).join("\n") + "|" + (deliberate || []).join("\n");
    if (answers.dataset.key !== key) {
      answers.dataset.key = key;
      answers.textContent = "";
      (actions || []).forEach((title, i) => {
        const careful = (deliberate || []).includes(title);
        const b = el("button", (i === 0 ? "primary" : "secondary") + (careful ? " deliberate" : ""), careful ? title + "…" : title);
        b.type = "button";
        b.dataset.toolAnswer = title;
        if (careful) b.title = "Takes a second click to confirm";
        answers.appendChild(b);
      });
    }
    answers.hidden = !actions || actions.length === 0;
    ask.hidden = !note && answers.hidden;
  }
  function drawTool(box, card) {
    box.dataset.status = card.status;
    drawBreakable(box.querySelector(".tool-title"), card.title);
    const args = box.querySelector(".tool-args");
    args.textContent = card.args;
    args.hidden = !card.args;
    box.querySelector(".tool-status").textContent = card.statusText;
    // The line in full on hover (a long command or path is cut on the line).
    box.querySelector("summary").title = card.title + (card.args ? " " + card.args : "") + (card.statusText ? " (" + card.statusText + ")" : "");
    box.querySelector(".tool-args-full").textContent = card.argsFull || "(none)";
    // A command's output is under the line: the opened card does not repeat it.
    const hasOutput = card.output !== undefined && card.shell === undefined;
    // A search's line says its arguments in full: the card opens to its results.
    box.querySelector(".tool-args-label").hidden = !!card.argsInLine && hasOutput;
    box.querySelector(".tool-args-full").hidden = !!card.argsInLine && hasOutput;
    box.querySelector(".tool-output-label").hidden = !hasOutput;
    const out = box.querySelector(".tool-output");
    out.hidden = !hasOutput;
    // A search's results: each match a link to its file and line (drawn
    // again only when they change, so a focused line keeps its focus).
    const key = card.results ? JSON.stringify(card.results) : "";
    if (card.results) {
      if (out.dataset.results !== key) {
        out.dataset.results = key;
        drawResults(out, card.results);
      }
    } else {
      delete out.dataset.results;
      out.textContent = hasOutput ? card.output || "(empty)" : "";
    }
    out.classList.toggle("results", !!card.results);
    drawShell(box.querySelector(".tool-shell"), card.shell);
    drawPlan(box.querySelector(".tool-plan"), card.plan);
    // While the call waits: why, and the permission question's answers once it is asked.
    const ask = box.querySelector(".tool-ask");
    drawAsk(ask, card.note, card.actions, card.deliberate);
    drawOutcome(box, card.outcome);
    // The daemon's question in full (the arguments whole, read-only or not) on hover and for screen readers.
    if (card.question) {
      ask.title = card.question;
      ask.querySelector(".tool-answers").setAttribute("aria-label", card.question);
    } else {
      ask.removeAttribute("title");
      ask.querySelector(".tool-answers").removeAttribute("aria-label");
    }
  }
  // A tool's name, which may break after its "_", "-", "." and "/" when the
  // line is narrow (create_pull_request_ / review_comment) rather than
  // anywhere or not at all.
  function drawBreakable(node, text) {
    if (node.dataset.text === text) return;
    node.dataset.text = text;
    node.textContent = "";
    for (const part of String(text).split(/(?<=[_\-./])/)) {
      if (node.childNodes.length) node.appendChild(document.createElement("wbr"));
      node.appendChild(document.createTextNode(part));
    }
  }
  // A command's output under its card's line, as it runs and once it
  // ended; kept scrolled to its end (the newest lines) while it grows,
  // unless the user scrolled up to read.
  function drawShell(pre, shell) {
    pre.hidden = shell === undefined;
    const text = shell === undefined ? "" : shell || "(no output)";
    if (pre.textContent === text) return;
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = text;
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  }
  // The model's plan under its card's line: each item with its state
  // (done, under way, to do) in a mark and in words for screen readers.
  const planMarks = { completed: "✓", in_progress: "▸", pending: "○" };
  const planWords = { completed: "done", in_progress: "under way", pending: "to do" };
  function drawPlan(list, plan) {
    const key = plan ? JSON.stringify(plan) : "";
    list.hidden = !plan;
    if (list.dataset.key === key) return;
    list.dataset.key = key;
    list.textContent = "";
    for (const it of plan || []) {
      const li = el("li", "plan-item plan-" + it.status);
      li.appendChild(el("span", "plan-mark", planMarks[it.status] || "○"));
      li.appendChild(el("span", "plan-text", it.content));
      if (it.priority === "high") li.appendChild(el("span", "plan-priority", "high priority"));
      li.setAttribute("aria-label", it.content + " (" + (planWords[it.status] || it.status) + (it.priority === "high" ? ", high priority" : "") + ")");
      list.appendChild(li);
    }
    if (plan && plan.length === 0) list.appendChild(el("li", "plan-item plan-empty", "(the plan is empty)"));
  }
  // A search's result lines: grep's matches and context lines and
  // find_files' paths are buttons that open the file at the line (through
  // the extension: command links fail in remote workspaces); "--" and the
  // notes are text.
  function drawResults(out, results) {
    out.textContent = "";
    for (const r of results) {
      if (r.kind === "text") {
        out.appendChild(el("div", "result-text", r.text || "\u00a0"));
        continue;
      }
      const b = el("button", "result " + r.kind);
      b.type = "button";
      b.dataset.matchPath = r.path;
      if (r.line) b.dataset.matchLine = String(r.line);
      b.title = "Open " + r.path + (r.line ? " at line " + r.line : "");
      if (r.prefix) {
        b.appendChild(el("span", "result-loc", r.prefix.replace(/ $/, "")));
        // A match only in the editor's unsaved text: its mark set apart.
        const text = r.text.slice(r.prefix.length);
        const unsaved = r.kind === "match" && text.endsWith("  (unsaved)");
        b.appendChild(document.createTextNode(" " + (unsaved ? text.slice(0, -"  (unsaved)".length) : text)));
        if (unsaved) b.appendChild(el("span", "result-unsaved", "  (unsaved)"));
      } else {
        b.appendChild(el("span", "result-loc", r.text));
      }
      out.appendChild(b);
    }
  }
  function drawParts(a, parts) {
    parts.forEach((p, i) => {
      const key = p.kind === "text" ? "text-" + i : p.kind === "ask" ? "ask-" + p.card.id : "tool-" + p.card.id;
      let node = a.children[i];
      if (!node || node.dataset.key !== key) {
        const fresh = p.kind === "text" ? el("div", "md") : p.kind === "ask" ? askCardNode(p.card) : toolNode(p.card);
        fresh.dataset.key = key;
        if (node) a.replaceChild(fresh, node);
        else a.appendChild(fresh);
        node = fresh;
      }
      if (p.kind === "text") {
        if (node.dataset.html !== p.html) {
          node.innerHTML = p.html;
          node.dataset.html = p.html;
        }
      } else if (p.kind === "ask") drawAskCard(node, p.card);
      else drawTool(node, p.card);
    });
    while (a.children.length > parts.length) a.lastElementChild.remove();
  }

  function drawTurnBody(div, t) {
    const a = div.querySelector(".a");
    const parts = t.parts || [];
    drawParts(a, parts);
    div.querySelectorAll(".status, .status-note, .activity, .written, .compacted, .summary-text, .turn-usage, .turn-actions, .turn-undo, .turn-undo-ask").forEach((n) => n.remove());
    const last = parts[parts.length - 1];
    const toolBusy = parts.some((p) => p.kind === "tool" && (p.card.status === "pending" || p.card.status === "running"));
    if (t.status === "streaming" && !toolBusy) {
      // Nothing new to read yet (no text, or a tool call just ended): the model is at work.
      if (!last || last.kind === "tool") div.appendChild(el("div", "activity thinking", t.activity || "thinking"));
      else if (t.activity) div.appendChild(el("div", "activity", t.activity));
    }
    if (t.files && t.files.length) {
      const w = el("div", "written");
      w.appendChild(el("span", "set-name", "Files written: "));
      t.files.forEach((f, i) => {
        if (i) w.appendChild(document.createTextNode(", "));
        w.appendChild(sessionFileLink(f));
      });
      div.appendChild(w);
    }
    if (t.usage) {
      const u = el("div", "turn-usage", t.usage);
      u.title = "Tokens this turn cost: input (the part read from the provider's cache) · output";
      div.appendChild(u);
    }
    if (t.status === "cancelled") div.appendChild(el("div", "status cancelled", "cancelled"));
    else if (t.status === "interrupted") {
      // The daemon stopped while it answered: this view says so, and what comes next.
      div.appendChild(el("div", "status interrupted", "interrupted"));
      if (t.error) div.appendChild(el("div", "status-note", t.error));
    }
    else if (t.status === "length") div.appendChild(el("div", "status length", "cut at the output limit"));
    else if (t.status === "error") div.appendChild(el("div", "status error", "Failed: " + (t.error || "the turn failed")));
    if (t.status !== "streaming") div.appendChild(turnActions(t));
    if (t.status !== "streaming" && (changedFiles(t) || (t.undo && t.undo.note))) div.appendChild(undoRow(t));
    if (t.undoAsk) {
      const box = askCardNode(t.undoAsk);
      box.classList.add("turn-undo-ask");
      drawAskCard(box, t.undoAsk);
      div.appendChild(box);
    }
    if (t.compacted) {
      const c = t.compacted;
      const m = el("div", "compacted");
      m.appendChild(el("span", "compacted-text", compactedWords(c.questions ?? 0)));
      m.title = "The model now sees a summary of the turns above and every turn below in full.";
      if (t.summary) {
        const b = el("button", "link show-summary", "Show summary");
        b.type = "button";
        b.setAttribute("aria-expanded", "false");
        const text = el("div", "summary-text", t.summary);
        text.hidden = true;
        b.addEventListener("click", () => {
          text.hidden = !text.hidden;
          b.textContent = text.hidden ? "Show summary" : "Hide summary";
          b.setAttribute("aria-expanded", String(!text.hidden));
        });
        m.appendChild(b);
        div.appendChild(m);
        div.appendChild(text);
      } else div.appendChild(m);
    }
  }

  // Under a finished answer: Retry (an answer that failed, was stopped or
  // cut) or Regenerate, and Edit, which puts the question into the input.
  // Both ask it again in its place; the extension asks before removing
  // later turns. Shown on the last turn, on the others when hovered.
  function turnActions(t) {
    const row = el("div", "turn-actions");
    const again = ["error", "cancelled", "interrupted", "length"].includes(t.status) ? "Retry" : "Regenerate";
    const b = el("button", "link again", again);
    b.type = "button";
    b.title = again === "Retry" ? "Ask this question again in place of this answer" : "Ask this question again for another answer";
    const e = el("button", "link edit", "Edit");
    e.type = "button";
    e.title = "Change this question and send it in its place";
    row.appendChild(b);
    row.appendChild(e);
    return row;
  }

  // Whether the turn changed files: an edit_file or create_file card done
  // (viewstate.ts turnChangedFiles says the same for the extension).
  function changedFiles(t) {
    return (t.parts || []).some((p) => p.kind === "tool" && (p.card.title === "edit_file" || p.card.title === "create_file") && p.card.status === "done");
  }

  // Under a turn that changed files: "Undo changes" (this turn's and the
  // later turns' changes taken back, in the editor's buffers), "Redo" once
  // undone, and what came of it as a note (not a notification).
  function undoRow(t) {
    const row = el("div", "turn-undo");
    const undone = !!(t.undo && t.undo.undone);
    if (changedFiles(t)) {
      const b = el("button", "undo-button " + (undone ? "redo" : "undo"), undone ? "Redo changes" : "Undo changes");
      b.type = "button";
      b.title = undone
        ? "Apply the changes undone last again"
        : "Take back the file changes of this turn and of the turns after it (in the editors, unsaved; Ctrl+Z takes the undo back)";
      row.appendChild(b);
    }
    if (t.undo && t.undo.note) {
      const n = el("span", "undo-note" + (t.undo.failed ? " failed" : ""), t.undo.note);
      n.setAttribute("role", "status");
      row.appendChild(n);
    }
    return row;
  }

  function startEdit(index) {
    const t = state && state.turns[index];
    if (!t) return;
    if (edit === null) edit = { index, draft: input.value };
    else edit.index = index;
    input.value = t.question;
    editing.hidden = false;
    log.querySelectorAll(".turn.editing").forEach((n) => n.classList.remove("editing"));
    log.querySelector('.turn[data-index="' + index + '"]')?.classList.add("editing");
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  function endEdit(restore) {
    if (edit === null) return;
    if (restore) input.value = edit.draft;
    edit = null;
    editing.hidden = true;
    log.querySelectorAll(".turn.editing").forEach((n) => n.classList.remove("editing"));
    vscode.setState({ draft: input.value });
  }

  /** The words of the compaction toast (extension.ts): the questions summarised, as people count them. */
  function compactedWords(n) {
    return n === 1
      ? "The first question and its answer are summarised for the model; every message is kept."
      : "The first " + n + " questions and their answers are summarised for the model; every message is kept.";
  }

  // A question's text, with its images' lines ([image: sources/NAME], as
  // stored) shown as links that open the image.
  function questionNode(text) {
    const names = [];
    const kept = String(text).split("\n").filter((l) => {
      const m = /^\[image: sources\/([^\]\/]+)\]$/.exec(l);
      if (m) names.push(m[1]);
      return !m;
    });
    const q = el("div", "q", kept.join("\n").trimEnd());
    if (names.length) {
      const row = el("div", "q-images");
      names.forEach((n) => {
        const b = el("button", "link q-image", "image: " + n);
        b.type = "button";
        b.dataset.subdir = "sources";
        b.dataset.name = n;
        b.title = "Open the image (the session folder's sources/" + n + ")";
        row.appendChild(b);
      });
      q.appendChild(row);
    }
    return q;
  }

  function drawTurn(t, i) {
    const div = el("div", "turn");
    div.dataset.index = String(i);
    const q = questionNode(t.question);
    if (t.questionId !== undefined) q.dataset.id = String(t.questionId);
    if (t.ids) div.dataset.ids = t.ids.join(" ");
    div.appendChild(q);
    // What went with the question: its file and the files it mentions, each a link.
    if (t.withFiles && t.withFiles.length) {
      const row = el("div", "q-files");
      row.appendChild(el("span", "set-name", "with"));
      t.withFiles.forEach((f) => row.appendChild(fileLink(f.label, f.path, "q-file")));
      div.appendChild(row);
    }
    div.appendChild(el("div", "a markdown"));
    drawTurnBody(div, t);
    return div;
  }

  // While an answer streams the input stays usable: the next question can
  // be typed; Enter sends it once the answer ends (the hint says so) and Esc
  // stops the answer.
  function drawBusy(busy) {
    send.hidden = busy;
    send.disabled = busy;
    stop.hidden = !busy;
    document.body.classList.toggle("busy", busy);
    drawHint();
  }

  // What goes with the question, in words: the chip's file and the
  // context's files; open files only by name.
  function drawHint(attention) {
    const s = state;
    hint.classList.toggle("attention", !!attention);
    if (s && s.busy) {
      hint.textContent = "Answering… Type your next question: Enter sends it once this answer ends. Esc stops the answer.";
      return;
    }
    const files = (s && s.context.find((c) => c.name === "files")) || { items: [] };
    const n = files.items.length;
    const ctx = n === 0 ? "" : n === 1 ? "the context's file" : "the context's " + n + " files";
    const f = s && s.turnFile;
    const parts = [];
    if (f && !f.removed) parts.push(f.label + " (its text as in the editor)");
    if (ctx) parts.push(ctx);
    if (images.length) parts.push(images.length === 1 ? "the pasted image" : "the " + images.length + " pasted images");
    let text = parts.length ? "Sent with the question: " + parts.join(" and ") + "." : "No file is sent with the question.";
    if (f && f.removed) text += " " + f.label + " is not sent.";
    hint.textContent = text + " Other open files are listed by name only.";
  }

  function drawTurnFile(f) {
    if (state) state.turnFile = f;
    turnFile.textContent = "";
    if (f) {
      const chip = el("span", "chip turn-chip" + (f.removed ? " removed" : ""));
      chip.dataset.item = f.item;
      if (f.removed) {
        const b = el("button", "link label restore", f.label);
        b.type = "button";
        b.title = "Not sent: click to send " + f.label + " with the question";
        chip.appendChild(b);
      } else {
        const a = fileLink(f.label, f.path, "label");
        a.title = f.item + ": sent with the question (the editor's text, unsaved edits included)";
        chip.appendChild(a);
        const x = el("button", "remove turn-remove", "×");
        x.type = "button";
        x.title = "Send the question without " + f.label;
        x.setAttribute("aria-label", x.title);
        chip.appendChild(x);
      }
      turnFile.appendChild(chip);
    }
    drawHint();
  }

  // The pasted images, as chips above the input; × takes one back.
  function drawImages() {
    imagesBox.textContent = "";
    images.forEach((im, i) => {
      const chip = el("span", "chip image-chip");
      chip.appendChild(el("span", "label", im.label));
      const x = el("button", "remove image-remove", "×");
      x.type = "button";
      x.dataset.image = String(i);
      x.title = "Send the question without " + im.label;
      x.setAttribute("aria-label", x.title);
      chip.appendChild(x);
      imagesBox.appendChild(chip);
    });
    drawHint();
  }

  function sizeText(n) {
    return n < 1024 * 1024 ? Math.max(1, Math.round(n / 1024)) + " KB" : (n / 1024 / 1024).toFixed(1) + " MB";
  }

  // A pasted image (a screenshot, a copied picture) goes with the question;
  // text pastes as usual.
  input.addEventListener("paste", (e) => {
    const files = Array.from((e.clipboardData && e.clipboardData.files) || []).filter((f) => /^image\/(png|jpeg|gif|webp)$/.test(f.type));
    if (!files.length) return;
    e.preventDefault();
    for (const f of files) {
      if (images.length >= 10) {
        drawHint(true);
        hint.textContent = "A question may carry 10 images at most.";
        break;
      }
      if (f.size > maxImageBytes) {
        drawHint(true);
        hint.textContent = "That image is " + sizeText(f.size) + "; an image may be 5 MB at most.";
        continue;
      }
      const r = new FileReader();
      r.onload = () => {
        images.push({ url: String(r.result), label: "image " + (images.length + 1) + " (" + f.type.slice(6).toUpperCase() + ", " + sizeText(f.size) + ")" });
        drawImages();
      };
      r.readAsDataURL(f);
    }
  });

  function drawSessionLine(m, u) {
    model.hidden = !m;
    model.textContent = m ? "model: " + m : "";
    usage.hidden = !u;
    usage.textContent = u ? "session: " + u : "";
  }

  function draw(s) {
    // An edit whose turn is gone (another session, a reload) ends.
    if (edit !== null && !(s.turns[edit.index] && state && state.turns[edit.index] && s.turns[edit.index].question === state.turns[edit.index].question)) endEdit(true);
    const wasAtBottom = atBottom();
    const prevTop = log.scrollTop;
    state = s;
    title.textContent = s.title;
    title.title = s.title;
    // The session's review mode of the model's edits, next to its title; a click changes it.
    mode.hidden = !s.reviewMode;
    mode.textContent = "edits: " + s.reviewMode;
    mode.dataset.mode = s.reviewMode || "";
    mode.title = {
      ask: "The model's edits are shown as a diff and applied when you accept them. Click to change.",
      auto: "The model's edits are applied at once (unsaved; Undo takes them back). Click to change.",
      off: "The model may not edit files. Click to change.",
    }[s.reviewMode] || "";
    drawContext(s);
    drawTurnFile(s.turnFile);
    drawSessionLine(s.model, s.usage);
    banner.hidden = !s.banner;
    banner.textContent = "";
    if (s.banner) {
      banner.appendChild(el("div", "banner-text", s.banner.text));
      for (const a of s.banner.actions || (s.banner.action ? [s.banner.action] : [])) {
        const b = el("button", "secondary", a.label);
        b.type = "button";
        b.dataset.command = a.command;
        banner.appendChild(b);
      }
    }
    log.textContent = "";
    if (s.turns.length === 0) log.appendChild(el("div", "welcome", "Ask about your code: the file shown above the input (the active editor's, with its selected lines and unsaved edits) and the files of the session's context go with the question; other open files are listed by name."));
    s.turns.forEach((t, i) => log.appendChild(drawTurn(t, i)));
    if (edit !== null) log.querySelector('.turn[data-index="' + edit.index + '"]')?.classList.add("editing");
    drawBusy(s.busy);
    if (s.highlight !== undefined) {
      const hit = log.querySelector('.turn[data-ids~="' + s.highlight + '"]');
      if (hit) {
        hit.classList.add("hit");
        // Scrolled to once; later redraws keep the mark and the user's place.
        if (scrolledTo !== s.highlight) hit.scrollIntoView({ block: "center" });
        else log.scrollTop = prevTop;
        scrolledTo = s.highlight;
      }
    } else if (wasAtBottom) {
      log.scrollTop = log.scrollHeight;
    } else {
      log.scrollTop = prevTop;
    }
    if (s.revealContext && s.revealContext !== revealed) {
      revealed = s.revealContext;
      // Kept after the flash: which reveal was drawn (read by the e2e test,
      // which may look later than the 1.2 s flash on a busy machine).
      context.dataset.revealed = String(s.revealContext);
      context.classList.add("flash");
      context.scrollIntoView({ block: "nearest" });
      setTimeout(() => context.classList.remove("flash"), 1200);
    }
  }

  window.addEventListener("message", (ev) => {
    const m = ev.data;
    if (m.type === "state") draw(m.state);
    else if (m.type === "turn" && state) {
      const wasAtBottom = atBottom();
      state.turns[m.index] = m.turn;
      let div = log.querySelector('.turn[data-index="' + m.index + '"]');
      if (!div) {
        // A new question: the view goes to it, wherever the user was.
        log.querySelector(".welcome")?.remove();
        div = drawTurn(m.turn, m.index);
        log.appendChild(div);
        follow(true);
      } else {
        drawTurnBody(div, m.turn);
        follow(wasAtBottom);
      }
    } else if (m.type === "busy") {
      if (state) state.busy = m.busy;
      drawBusy(m.busy);
      if (!m.busy) input.focus();
    } else if (m.type === "focusInput") {
      input.focus();
    } else if (m.type === "restoreInput") {
      if (!input.value.trim()) {
        input.value = m.text;
        vscode.setState({ draft: m.text });
      }
      input.focus();
    } else if (m.type === "draftRequest") {
      // Preview Prompt from the palette: what a question would send now.
      vscode.postMessage({ type: "draft", seq: m.seq, text: input.value, images: images.length });
    } else if (m.type === "mentionResults") {
      mentions.results(m.seq, m.files);
    } else if (m.type === "history") {
      history.set(m.entries);
    } else if (m.type === "turnFile") {
      drawTurnFile(m.file);
    } else if (m.type === "sessionLine") {
      if (state) {
        state.model = m.model;
        state.usage = m.usage;
      }
      drawSessionLine(m.model, m.usage);
    }
  });

  function submit() {
    const text = input.value;
    if (!text.trim() && !images.length) return;
    if (state && state.busy) {
      // Kept in the input until the answer ends; the hint says so.
      drawHint(true);
      return;
    }
    const sent = images.map((im) => im.url);
    images = [];
    drawImages();
    history.add(text);
    mentions.close();
    if (edit !== null) {
      const index = edit.index;
      endEdit(true); // the draft from before the edit comes back
      vscode.postMessage({ type: "rewind", index, text, images: sent });
      return;
    }
    input.value = "";
    vscode.setState({ draft: "" });
    vscode.postMessage({ type: "send", text, images: sent });
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit();
  });
  input.addEventListener("keydown", (e) => {
    // The list of files to mention, while open, has the keys it needs (Esc too: it stops nothing).
    if (mentions.key(e)) {
      e.preventDefault();
      e.stopPropagation();
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
      return;
    }
    // The questions sent before, while not editing one (Edit has its own draft).
    const plain = !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing && edit === null;
    if (plain && e.key === "ArrowUp" && history.back()) e.preventDefault();
    else if (plain && e.key === "ArrowDown" && history.forward()) e.preventDefault();
  });
  input.addEventListener("input", () => {
    history.typed();
    mentions.update();
    vscode.setState({ draft: input.value });
  });
  // The caret moved elsewhere: the list follows (or closes).
  input.addEventListener("click", () => mentions.update());
  input.addEventListener("keyup", (e) => {
    if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) mentions.update();
  });
  input.addEventListener("blur", () => mentions.close());
  stop.addEventListener("click", () => vscode.postMessage({ type: "stop" }));
  // Preview: the prompt the draft would send, with the chips' files (nothing is sent; the draft stays).
  $("preview").addEventListener("click", () => vscode.postMessage({ type: "preview", text: input.value, images: images.length }));
  // Esc in the view stops a running answer.
  // Esc while editing a question gives the input back its draft.
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state && state.busy && !e.isComposing) {
      e.preventDefault();
      vscode.postMessage({ type: "stop" });
    } else if (e.key === "Escape" && edit !== null && !e.isComposing) {
      e.preventDefault();
      endEdit(true);
    }
  });

  document.addEventListener("click", (e) => {
    const t = e.target instanceof Element ? e.target : null;
    if (!t) return;
    const a = t.closest("a");
    if (a) {
      e.preventDefault();
      vscode.postMessage({ type: "openLink", href: a.dataset.href || a.getAttribute("href") || "" });
      return;
    }
    const img = t.closest("button.image-remove");
    if (img) {
      images.splice(Number(img.dataset.image), 1);
      drawImages();
      return;
    }
    if (t.closest("button.turn-remove")) {
      vscode.postMessage({ type: "removeTurnFile" });
      return;
    }
    if (t.closest("button.restore")) {
      vscode.postMessage({ type: "restoreTurnFile" });
      return;
    }
    const again = t.closest(".turn-actions button.again");
    if (again) {
      const turn = again.closest(".turn");
      if (state && !state.busy) vscode.postMessage({ type: "rewind", index: Number(turn.dataset.index) });
      return;
    }
    const undoButton = t.closest(".turn-undo button.undo-button");
    if (undoButton) {
      const turn = undoButton.closest(".turn");
      if (state && !state.busy) {
        undoButton.disabled = true;
        vscode.postMessage({ type: undoButton.classList.contains("redo") ? "redoTurn" : "undoTurn", index: Number(turn.dataset.index) });
      }
      return;
    }
    const editButton = t.closest(".turn-actions button.edit");
    if (editButton) {
      startEdit(Number(editButton.closest(".turn").dataset.index));
      return;
    }
    if (t.closest("#add-file")) {
      vscode.postMessage({ type: "addContextFile" });
      return;
    }
    const sfRemove = t.closest("button.session-file-remove");
    if (sfRemove) {
      vscode.postMessage({ type: "removeSessionFile", name: sfRemove.dataset.name });
      return;
    }
    const remove = t.closest("button.remove");
    if (remove) {
      vscode.postMessage({ type: "removeContext", set: remove.dataset.set, value: remove.dataset.value });
      return;
    }
    const sf = t.closest("[data-subdir]");
    if (sf) {
      vscode.postMessage({ type: "openSessionFile", subdir: sf.dataset.subdir, name: sf.dataset.name });
      return;
    }
    const match = t.closest("[data-match-path]");
    if (match) {
      vscode.postMessage({ type: "openMatch", path: match.dataset.matchPath, line: match.dataset.matchLine ? Number(match.dataset.matchLine) : undefined });
      return;
    }
    const file = t.closest("[data-path]");
    if (file) {
      vscode.postMessage({ type: "openFile", path: file.dataset.path });
      return;
    }
    const answer = t.closest("button[data-tool-answer]");
    if (answer) {
      const title = answer.dataset.toolAnswer;
      // A deliberate answer: the first click arms it (it says so), the
      // second sends it; it disarms by itself after a while.
      if (answer.classList.contains("deliberate") && !answer.classList.contains("armed")) {
        answer.classList.add("armed");
        answer.textContent = "Confirm: " + title;
        answer.title = "Click again to answer " + title;
        // Disarmed after a while, or once the keyboard goes elsewhere (an Enter meant for something else never confirms it).
        const disarm = () => {
          answer.removeEventListener("blur", disarm);
          if (!answer.isConnected || answer.disabled || !answer.classList.contains("armed")) return;
          answer.classList.remove("armed");
          answer.textContent = title + "…";
          answer.title = "Takes a second click to confirm";
        };
        answer.addEventListener("blur", disarm);
        setTimeout(disarm, 6000);
        return;
      }
      answer.parentElement.querySelectorAll("button").forEach((b) => (b.disabled = true));
      const own = answer.closest(".ask-card");
      if (own) vscode.postMessage({ type: "questionAnswer", id: own.dataset.qid, title });
      else vscode.postMessage({ type: "toolAnswer", id: answer.closest(".tool").dataset.id, title });
      return;
    }
    const insert = t.closest("button.insert");
    if (insert) {
      const code = insert.closest(".code-block")?.querySelector("code");
      vscode.postMessage({ type: "insertCode", text: code ? code.textContent : "" });
      return;
    }
    const apply = t.closest("button.apply");
    if (apply) {
      const code = apply.closest(".code-block")?.querySelector("code");
      vscode.postMessage({ type: "applyCode", text: code ? code.textContent : "", file: apply.dataset.file || undefined });
      return;
    }
    const copy = t.closest("button.copy");
    if (copy) {
      const code = copy.closest(".code-block")?.querySelector("code");
      vscode.postMessage({ type: "copy", text: code ? code.textContent : "" });
      copy.textContent = "Copied";
      setTimeout(() => (copy.textContent = "Copy"), 1500);
      return;
    }
    const cmd = t.closest("button[data-command]");
    if (cmd) vscode.postMessage({ type: "action", command: cmd.dataset.command });
  });

  document.addEventListener(
    "toggle",
    (e) => {
      const box = e.target instanceof Element ? e.target.closest(".tool") : null;
      if (!box || e.target.tagName !== "DETAILS") return;
      if (e.target.open) openCards.add(box.dataset.id);
      else openCards.delete(box.dataset.id);
    },
    true, // toggle does not bubble
  );

  const saved = vscode.getState();
  if (saved && saved.draft) input.value = saved.draft;
  vscode.postMessage({ type: "ready" });
})();
