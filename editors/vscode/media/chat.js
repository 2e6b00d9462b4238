// The chat view's main script, loaded last (each of the page's scripts with
// its CSP nonce; history.js, mentions.js, dom.js, context.js, cards.js and
// turns.js before it). It draws the state the extension sends and posts the
// user's actions back; it opens nothing itself: links, files and the
// clipboard go through the extension. Answer HTML comes from markdown-it in
// the extension with HTML disabled.
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
  // Up and Down in the input: the questions sent before (history.js).
  const history = window.ctxlsHistory(input, (text) => vscode.setState({ draft: text }));
  // "@" opens a list of the workspace's files to mention (mentions.js).
  const mentions = window.ctxlsMentions(
    input,
    $("mentions"),
    (query, seq) => vscode.postMessage({ type: "mentionQuery", query, seq }),
    (text) => vscode.setState({ draft: text }),
  );

  const { el, fileLink } = window.ctxlsDom;
  // The header's context (context.js) and the log's turns (turns.js, with their cards from cards.js).
  const { drawContext } = window.ctxlsContext;
  const { drawTurn, drawTurnBody } = window.ctxlsTurns;

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

  const saved = vscode.getState();
  if (saved && saved.draft) input.value = saved.draft;
  vscode.postMessage({ type: "ready" });
})();
