// A turn in the log: its question (with the files and images that went
// with it), its answer's parts, its status, usage and the files it wrote,
// Retry or Regenerate and Edit, Undo and Redo of its changes, and the
// compaction marker. Loaded before chat.js.
(function () {
  const { el, fileLink, sessionFileLink } = window.ctxlsDom;
  const { askCardNode, drawAskCard, drawParts } = window.ctxlsCards;

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

  /** The words of the compaction toast (chat.ts): the questions summarised, as people count them. */
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

  window.ctxlsTurns = { drawTurn, drawTurnBody };
})();
