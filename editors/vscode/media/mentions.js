// `@file` mentions in the chat's input: "@" at the start of the input or
// after a space opens a list of the workspace's files matching what
// follows it (asked of the daemon through the extension, once the typing
// rests). The list is the keyboard's while it is open: Up and Down choose,
// Enter or Tab puts "@path " in place of what was typed, Esc closes it; a
// click takes a file too. The daemon reads the mentions of the question it
// is sent: nothing else goes with it. Loaded before chat.js, which wires
// it to the input.
(function () {
  const debounceMs = 120;

  /**
   * input: the textarea; box: the list's element (a listbox above the
   * input); ask(query, seq): asks for the files; changed(text): the
   * input's new text after a file was taken (the page keeps its draft).
   */
  function createMentions(input, box, ask, changed) {
    // The "@…" being completed: where its "@" is, and what follows it.
    let token = null;
    let files = [];
    let selected = 0;
    let seq = 0;
    let timer = null;

    function el(tag, cls, text) {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    }
    // The "@query" right before the caret, if the caret ends one.
    function tokenAtCaret() {
      if (input.selectionStart !== input.selectionEnd) return null;
      const before = input.value.slice(0, input.selectionStart);
      const m = /(^|\s)@(\S*)$/.exec(before);
      return m ? { at: before.length - m[2].length - 1, query: m[2] } : null;
    }
    function close() {
      token = null;
      files = [];
      if (timer) clearTimeout(timer);
      timer = null;
      seq++;
      delete box.dataset.query;
      box.hidden = true;
      box.textContent = "";
      input.removeAttribute("aria-activedescendant");
      input.setAttribute("aria-expanded", "false");
    }
    function draw(loading) {
      box.textContent = "";
      box.hidden = false;
      input.setAttribute("aria-expanded", "true");
      if (!files.length) {
        box.appendChild(el("div", "mention-empty", loading ? "Looking for files…" : token && token.query ? "No workspace file matches “" + token.query + "”" : "No workspace files"));
        input.removeAttribute("aria-activedescendant");
        return;
      }
      files.forEach((f, i) => {
        const row = el("div", "mention" + (i === selected ? " selected" : ""));
        row.id = "mention-" + i;
        row.setAttribute("role", "option");
        row.setAttribute("aria-selected", String(i === selected));
        row.dataset.mentionIndex = String(i);
        row.title = f;
        const slash = f.lastIndexOf("/");
        row.appendChild(el("span", "mention-name", f.slice(slash + 1)));
        if (slash > 0) row.appendChild(el("span", "mention-dir", f.slice(0, slash)));
        box.appendChild(row);
      });
      input.setAttribute("aria-activedescendant", "mention-" + selected);
      box.querySelector(".mention.selected")?.scrollIntoView({ block: "nearest" });
    }
    function query() {
      const n = ++seq;
      ask(token.query, n);
    }
    function accept(i) {
      const f = files[i];
      if (!token || f === undefined) return;
      const end = input.selectionStart;
      const text = input.value.slice(0, token.at) + "@" + f + " " + input.value.slice(end);
      const caret = token.at + f.length + 2;
      close();
      input.value = text;
      input.setSelectionRange(caret, caret);
      input.focus();
      changed(text);
    }

    // Clicks choose without taking the keyboard from the input.
    box.addEventListener("mousedown", (e) => e.preventDefault());
    box.addEventListener("click", (e) => {
      const row = e.target instanceof Element ? e.target.closest("[data-mention-index]") : null;
      if (row) accept(Number(row.dataset.mentionIndex));
    });
    input.setAttribute("aria-controls", box.id);
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");

    return {
      /** The input's text or caret changed: opens, updates or closes the list. */
      update() {
        const t = tokenAtCaret();
        if (!t) {
          if (token) close();
          return;
        }
        const fresh = !token || token.at !== t.at;
        const same = token && token.at === t.at && token.query === t.query;
        token = t;
        if (same) return;
        delete box.dataset.query; // the list shown answers older text
        if (fresh) {
          files = [];
          selected = 0;
          draw(true);
        }
        if (timer) clearTimeout(timer);
        timer = setTimeout(() => {
          timer = null;
          if (token) query();
        }, debounceMs);
      },
      /** The files for the asking numbered n (older answers are dropped). */
      results(n, list) {
        if (n !== seq || !token) return;
        // The file chosen stays chosen when the new list has it (the
        // answer for the text typed since came after a key moved the
        // choice), else the first.
        const chosen = files[selected];
        files = list;
        selected = Math.max(0, chosen === undefined ? 0 : list.indexOf(chosen));
        box.dataset.query = token.query; // the text these files answer
        draw(false);
      },
      /** A key in the input: whether the list took it. */
      key(e) {
        if (!token || box.hidden || e.isComposing || e.altKey || e.ctrlKey || e.metaKey) return false;
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
          if (files.length) {
            selected = (selected + (e.key === "ArrowDown" ? 1 : files.length - 1)) % files.length;
            draw(false);
          }
          return true;
        }
        if ((e.key === "Enter" && !e.shiftKey) || (e.key === "Tab" && !e.shiftKey)) {
          if (!files.length) {
            // Nothing to take: Tab stays in the input, Enter sends as typed.
            if (e.key === "Enter") {
              close();
              return false;
            }
            return true;
          }
          accept(selected);
          return true;
        }
        if (e.key === "Escape") {
          close();
          return true;
        }
        return false;
      },
      open() {
        return !!token && !box.hidden;
      },
      close,
    };
  }
  window.ctxlsMentions = createMentions;
})();
