// The chat input's history, walked as in Copilot Chat or a shell: Up with
// the caret on the input's first line brings back the previous question
// sent, again for older ones; Down with the caret on the last line goes
// forward, past the newest to the draft that was being typed. Typing into a
// question brought back makes it the draft (the history keeps the question
// as sent). Loaded before chat.js, which wires it to the input's keys.
(function () {
  /**
   * input: the textarea. onChange(text) is told the input's new text (the
   * page keeps it as its draft). The list comes from the extension (its
   * workspace's questions, src/history.ts) and grows with each question sent.
   */
  function createHistory(input, onChange) {
    let list = [];
    // Where the walk is (an index into list), null when not walking; draft:
    // the input's text when the walk began.
    let pos = null;
    let draft = "";

    function show(text, caretAtStart) {
      input.value = text;
      const at = caretAtStart ? 0 : text.length;
      input.setSelectionRange(at, at);
      onChange(text);
    }
    function caretOnFirstLine() {
      return input.selectionStart === input.selectionEnd && !input.value.slice(0, input.selectionStart).includes("\n");
    }
    function caretOnLastLine() {
      return input.selectionStart === input.selectionEnd && !input.value.slice(input.selectionEnd).includes("\n");
    }
    return {
      /** The questions sent, oldest first (from the extension). */
      set(entries) {
        list = Array.isArray(entries) ? entries.slice() : [];
        if (pos !== null && pos >= list.length) pos = null;
      },
      /** A question sent from the input: the newest (once, when it repeats the last). */
      add(text) {
        pos = null;
        if (!text.trim()) return;
        if (list[list.length - 1] !== text) list.push(text);
      },
      /** The user typed: a question brought back is now the draft. */
      typed() {
        pos = null;
      },
      /** Up: the previous question, when the caret is on the first line; whether it took the key. */
      back() {
        if (!list.length || !caretOnFirstLine()) return false;
        if (pos === null) {
          draft = input.value;
          pos = list.length;
        }
        if (pos === 0) return true; // the oldest: it stays
        pos--;
        // The caret at the start, so Up again goes on from a question of several lines.
        show(list[pos], true);
        return true;
      },
      /** Down: the next question, or the draft after the newest; whether it took the key. */
      forward() {
        if (pos === null || !caretOnLastLine()) return false;
        pos++;
        if (pos >= list.length) {
          pos = null;
          show(draft, false);
        } else show(list[pos], false);
        return true;
      },
      /** Whether a question brought back is in the input. */
      walking() {
        return pos !== null;
      },
    };
  }
  window.ctxlsHistory = createHistory;
})();
