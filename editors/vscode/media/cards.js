// The cards in an answer: a tool call's (its line, arguments and result, a
// command's output, the model's plan, a search's results as links), a
// question's answers on it or on a card of its own, and drawParts, which
// puts an answer's text and cards in order. Loaded before turns.js.
(function () {
  const { el } = window.ctxlsDom;
  // The tool cards the user opened, by id: a whole redraw (a new title, a
  // context change) keeps them open.
  const openCards = new Set();

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

  window.ctxlsCards = { askCardNode, drawAskCard, drawParts };
})();
