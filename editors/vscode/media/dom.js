// The chat view's DOM helpers, shared by its scripts (loaded first): an
// element with its class and text, and the links to a workspace file and to
// a file of the session folder (the click handler in chat.js posts them to
// the extension, which opens them).
(function () {
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

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

  window.ctxlsDom = { el, fileLink, sessionFileLink };
})();
