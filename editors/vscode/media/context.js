// The header's context: the session's context sets (files, the editor
// view, …) as chips with ×, the session folder's files, and the project's
// instructions files. Loaded before chat.js, which draws it with each state.
(function () {
  const { el, fileLink, sessionFileLink } = window.ctxlsDom;
  const context = document.getElementById("context");

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

  window.ctxlsContext = { drawContext };
})();
