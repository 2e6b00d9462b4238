-- The model's edits, applied (workspace/applyEdit), and a chat's code
-- block put into a file (:CtxlsApplyBlock).
--
-- The daemon sends an accepted edit as a WorkspaceEdit of documentChanges:
-- a TextDocumentEdit with the version it was computed against (null for a
-- file not open: its text on disk), or CreateFile then an insert for a new
-- file. It is applied to the BUFFER, never saved: the buffer stays
-- modified until you write it, and u takes the edit back (it is an undo
-- step of its own). An edit whose version is not the buffer's (you typed
-- meanwhile) is refused; the daemon, sent your typing first, makes the edit
-- again against the text you have and sends it again (it tells you and the
-- model only when you changed the very text the edit replaces).
--
-- An undo of a turn (:CtxlsUndo) comes the same way: TextDocumentEdits on
-- the buffers' versions (u takes the undo back), and DeleteFile for a file
-- the turn created: its buffer is wiped, unsaved text and all, and the
-- file removed from the disk if it was written.
local E = {}

local P = require("ctxls.protocol")
local daemon = require("ctxls.daemon")
local S = require("ctxls.state")
local ctxls, state, notify = S.ctxls, S.state, S.notify
local attachable, is_chat = daemon.attachable, daemon.is_chat
local append = require("ctxls.chat").append

local function relative_name(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

-- find_buf is the buffer named path, or nil (none is made).
function E.find_buf(path)
  local full = vim.fn.fnamemodify(path, ":p")
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name == path or name == full then
      return b
    end
  end
end

-- line_ending is the buffer's line ending as Neovim sends its text.
local function line_ending(b)
  local ff = vim.api.nvim_buf_get_option(b, "fileformat")
  return ff == "dos" and "\r\n" or ff == "mac" and "\r" or "\n"
end

-- text is the buffer's text as the daemon holds it (Neovim sends its lines
-- joined, with a final line ending when 'eol' is set); "" for a buffer
-- made for a new file.
local function text(b, new)
  if new then
    return ""
  end
  local le = line_ending(b)
  local t = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, true), le)
  if vim.api.nvim_buf_get_option(b, "eol") then
    t = t .. le
  end
  return t
end

-- offset is the byte offset in t (lines split by le) of an LSP position
-- counted in encoding. (The daemon's positions were sent as {Line,
-- Character} for a while: both spellings are read.)
local function offset(t, le, pos, encoding)
  local off = 0
  for _ = 1, pos.line or pos.Line or 0 do
    local i = t:find(le, off + 1, true)
    if not i then
      return #t
    end
    off = i - 1 + #le
  end
  local nl = t:find(le, off + 1, true)
  local line = t:sub(off + 1, nl and nl - 1 or #t)
  local char = pos.character or pos.Character or 0
  if encoding == "utf-8" then
    return off + math.min(char, #line)
  end
  local ok, i = pcall(vim.str_byteindex, line, char, encoding ~= "utf-32")
  return off + (ok and i or #line)
end

-- splice applies TextEdits (non-overlapping) to t.
local function splice(t, le, edits, encoding)
  local ranges = {}
  for _, e in ipairs(edits) do
    table.insert(ranges, { from = offset(t, le, e.range.start, encoding), to = offset(t, le, e.range["end"], encoding), text = e.newText or "" })
  end
  table.sort(ranges, function(a, b)
    return a.from > b.from
  end)
  for _, r in ipairs(ranges) do
    t = t:sub(1, r.from) .. r.text .. t:sub(math.max(r.to, r.from) + 1)
  end
  return t
end

-- undo_break ends the buffer's undo block: the edit is one step of its own.
local function undo_break(b)
  vim.api.nvim_buf_call(b, function()
    vim.cmd("let &g:undolevels = &g:undolevels")
  end)
end

-- set_text makes the buffer's text t, changing only the lines that differ
-- (marks, folds and the cursor elsewhere stay).
local function set_text(b, t)
  local le = line_ending(b)
  local eol = t:sub(-#le) == le
  if eol then
    t = t:sub(1, -#le - 1)
  end
  local new = vim.split(t, le, { plain = true })
  local old = vim.api.nvim_buf_get_lines(b, 0, -1, true)
  local p = 0
  while p < #old and p < #new and old[p + 1] == new[p + 1] do
    p = p + 1
  end
  local s = 0
  while s < #old - p and s < #new - p and old[#old - s] == new[#new - s] do
    s = s + 1
  end
  undo_break(b)
  vim.api.nvim_buf_set_lines(b, p, #old - s, true, vim.list_slice(new, p + 1, #new - s))
  if eol ~= vim.api.nvim_buf_get_option(b, "eol") and t ~= "" then
    vim.api.nvim_buf_set_option(b, "eol", eol)
    vim.api.nvim_buf_set_option(b, "fixeol", eol)
  end
  undo_break(b)
end

-- created makes the buffer of a new file (empty, not on disk: its folder
-- is made when it is first written).
local function created(path)
  local b = E.find_buf(path) or vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(b) then
    vim.fn.bufload(b)
  end
  vim.api.nvim_buf_set_option(b, "buflisted", true)
  vim.api.nvim_create_autocmd("BufWritePre", {
    buffer = b,
    once = true,
    callback = function()
      vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
    end,
  })
  return b
end

-- removed wipes the buffer of path (the windows showing it show another
-- buffer instead: none closes, the cursor stays in its window) and removes
-- the file from the disk. false and why when it cannot.
local function removed(path, opts)
  local b = E.find_buf(path)
  if b and vim.api.nvim_buf_is_valid(b) then
    for _, win in ipairs(vim.fn.win_findbuf(b)) do
      local alt = vim.api.nvim_win_call(win, function()
        return vim.fn.bufnr("#")
      end)
      if alt <= 0 or alt == b or not vim.api.nvim_buf_is_valid(alt) then
        alt = vim.api.nvim_create_buf(true, false)
      end
      vim.api.nvim_win_set_buf(win, alt)
    end
    vim.api.nvim_buf_delete(b, { force = true })
  end
  local st = vim.loop.fs_stat(path)
  if st then
    local ok
    if st.type == "directory" then
      ok = opts.recursive and vim.fn.delete(path, "rf") == 0
    else
      ok = os.remove(path)
    end
    if not ok then
      return false, "could not remove " .. relative_name(path)
    end
  end
  return true
end

-- apply answers workspace/applyEdit: every change is checked first (a
-- version that is not the buffer's, a new file that exists, a file not
-- open whose buffer has unsaved text refuse the whole edit), then applied
-- to the buffers. attach(buf) attaches a buffer opened for it to the
-- daemon's client; the daemon is sent the changes before the answer.
function E.apply(params, client, attach)
  local edit = (params or {}).edit or {}
  local changes = edit.documentChanges
  if not changes and edit.changes then
    changes = {}
    for uri, edits in pairs(edit.changes) do
      table.insert(changes, { textDocument = { uri = uri }, edits = edits, unversioned = true })
    end
  end
  -- The buffers' changes reach the daemon before the answer (an edit
  -- refused too: the model is told the text there now). Any notification
  -- makes Neovim send the didChange it is holding back (the debounce);
  -- $/setTrace with the trace as it is changes nothing.
  local function answer(result)
    if client then
      local notify = vim.fn.has("nvim-0.11") == 1 and function(m, p)
        return client:notify(m, p)
      end or client.notify
      notify("$/setTrace", { value = (client.config and client.config.trace) or "off" })
    end
    return result
  end
  local function refuse(reason)
    return answer({ applied = false, failureReason = reason })
  end
  local versions = vim.lsp.util.buf_versions
  local new_files = {}
  for _, c in ipairs(changes or {}) do
    if c.kind == "create" then
      local path = vim.uri_to_fname(c.uri)
      local b = E.find_buf(path)
      local has_text = b and vim.api.nvim_buf_is_loaded(b)
        and (vim.api.nvim_buf_get_option(b, "modified") or vim.api.nvim_buf_line_count(b) > 1 or vim.api.nvim_buf_get_lines(b, 0, 1, true)[1] ~= "")
      local opts = c.options or {}
      if (vim.loop.fs_stat(path) or has_text) and not (opts.ignoreIfExists or opts.overwrite) then
        return refuse(relative_name(path) .. " exists")
      end
      new_files[path] = true
    elseif c.kind == "delete" then
      local path = vim.uri_to_fname(c.uri)
      local st = vim.loop.fs_stat(path)
      if not st and not E.find_buf(path) and not (c.options or {}).ignoreIfNotExists then
        return refuse(relative_name(path) .. " does not exist")
      elseif st and st.type == "directory" and not (c.options or {}).recursive then
        return refuse(relative_name(path) .. " is a folder")
      end
    elseif c.kind then
      return refuse("ctxls.nvim does not " .. c.kind .. " files")
    else
      local path = vim.uri_to_fname(c.textDocument.uri)
      local b = E.find_buf(path)
      local v = c.textDocument.version
      local loaded = b and vim.api.nvim_buf_is_loaded(b)
      if v ~= nil and v ~= vim.NIL then
        if not loaded then
          return refuse(relative_name(path) .. " is not open any more")
        elseif versions[b] ~= v then
          return refuse(string.format("%s changed since the edit was made (version %s, the buffer's is %s)", relative_name(path), v, tostring(versions[b])))
        end
      elseif loaded and not new_files[path] and not c.unversioned and vim.api.nvim_buf_get_option(b, "modified") then
        return refuse(relative_name(path) .. " has unsaved changes the edit was not made against")
      end
    end
  end
  for _, c in ipairs(changes or {}) do
    if c.kind == "create" then
      local b = created(vim.uri_to_fname(c.uri))
      attach(b)
    elseif c.kind == "delete" then
      local ok, why = removed(vim.uri_to_fname(c.uri), c.options or {})
      if not ok then
        return refuse(why)
      end
    elseif not c.kind then
      local path = vim.uri_to_fname(c.textDocument.uri)
      local new = new_files[path]
      local b = E.find_buf(path) or vim.fn.bufadd(path)
      if not vim.api.nvim_buf_is_loaded(b) then
        vim.fn.bufload(b)
      end
      vim.api.nvim_buf_set_option(b, "buflisted", true)
      attach(b)
      local enc = client and client.offset_encoding or "utf-16"
      local le = line_ending(b)
      set_text(b, splice(text(b, new), le, c.edits or {}, enc))
    end
  end
  return answer({ applied = true })
end

-- Code blocks -----------------------------------------------------------------

-- fence matches a Markdown code fence: its indent, its run of ` or ~, the
-- rest (the info string).
local function fence(line)
  local indent, run, rest = line:match("^(%s*)(```+)(.*)$")
  if not run then
    indent, run, rest = line:match("^(%s*)(~~~+)(.*)$")
  end
  if run and #indent <= 3 then
    return run, rest
  end
end

-- block_at gives the lines of the fenced code block around line lnum
-- (1-based; a fence line counts as in its block) of buf, and the block's
-- first and last line, or nil.
function E.block_at(buf, lnum)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local open, run
  for i, l in ipairs(lines) do
    local r, rest = fence(l)
    if not open then
      if r then
        open, run = i, r
      end
    elseif r and r:sub(1, 1) == run:sub(1, 1) and #r >= #run and vim.trim(rest) == "" then
      if lnum >= open and lnum <= i then
        return vim.list_slice(lines, open + 1, i - 1), open, i
      end
      open = nil
    end
    if i > lnum and not open then
      return nil
    end
  end
end

-- Undoing a turn's file changes -------------------------------------------

-- undo_line is the chat's note of an undo or redo's result r: the files
-- done (by their names) and those left as they were, with why.
local function undo_line(verb, r)
  local names = {}
  for _, path in ipairs(r.restored or {}) do
    table.insert(names, vim.fn.fnamemodify(path, ":~:."))
  end
  local s
  if #names == 0 then
    s = verb .. " no file"
  else
    s = string.format("%s the model's changes to %d file%s: %s", verb, #names, #names == 1 and "" or "s", table.concat(names, ", "))
  end
  local left = {}
  for _, l in ipairs(r.left or {}) do
    table.insert(left, vim.fn.fnamemodify(l.path, ":~:.") .. " (" .. (l.reason or "") .. ")")
  end
  if #left > 0 then
    s = s .. "; left: " .. table.concat(left, ", ")
  end
  return s
end

-- undo_turn runs ctxls.session.undo (undo) or ctxls.session.redo (redo)
-- for the current session, with the extra arguments arg; cb(r) after the
-- chat's note. The daemon applies it through workspace/applyEdit: the
-- buffers change (u takes an undo back), nothing is saved, and the cursor
-- stays where it is. Refused (nothing to undo, a turn running), the
-- daemon's message is shown.
local function undo_turn(which, arg, cb)
  local id = state.current
  if not id then
    notify("no current session", vim.log.levels.WARN)
    return
  end
  arg = vim.tbl_extend("force", { sessionId = id }, arg or {})
  local command = which == "undo" and P.commands.session_undo or P.commands.session_redo
  ctxls.command(command, arg, function(r)
    local line = undo_line(which == "undo" and "undid" or "redid", r)
    local buf = state.bufs[r.sessionId or id]
    if buf and vim.api.nvim_buf_is_valid(buf) then
      local last = vim.api.nvim_buf_line_count(buf)
      local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1]
      append(buf, string.format("%s_%s_\n\n", tail == "" and "\n" or "\n\n", line))
    end
    notify(line)
    if cb then
      cb(r)
    end
  end, function(err)
    notify(err.message or vim.inspect(err), vim.log.levels.WARN)
    if cb then
      cb(nil, err)
    end
  end)
end

-- undo undoes the file changes of the current session's latest turn not
-- undone yet (:CtxlsUndo).
function E.undo()
  undo_turn("undo")
end

-- redo applies again the changes of the turn undone last (:CtxlsRedo).
function E.redo()
  undo_turn("redo")
end

-- target_window is the window :CtxlsApplyBlock puts a block into: the
-- last one entered that shows a file, else one in this tab that does.
local function target_window()
  local win = state.last_win
  if win and vim.api.nvim_win_is_valid(win) and attachable(vim.api.nvim_win_get_buf(win)) then
    return win
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if attachable(vim.api.nvim_win_get_buf(w)) then
      return w
    end
  end
end

-- apply_block puts the fenced code block under the cursor in a chat
-- buffer into the last window that showed a file: its lines go below
-- that window's cursor line; with replace (:CtxlsApplyBlock!) they replace
-- the lines of the last visual selection made in that buffer. One undo
-- step, unsaved; the cursor goes to the first line put.
function E.apply_block(replace)
  local chat = vim.api.nvim_get_current_buf()
  if not is_chat(chat) then
    notify("put the cursor on a code block in a chat buffer first", vim.log.levels.WARN)
    return
  end
  local lines = E.block_at(chat, vim.api.nvim_win_get_cursor(0)[1])
  if not lines then
    notify("the cursor is not in a code block", vim.log.levels.WARN)
    return
  end
  local win = target_window()
  if not win then
    notify("no window shows a file: open the file beside the chat", vim.log.levels.WARN)
    return
  end
  local buf = vim.api.nvim_win_get_buf(win)
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":t")
  local first, last, msg
  if replace then
    local s, e = vim.api.nvim_buf_get_mark(buf, "<"), vim.api.nvim_buf_get_mark(buf, ">")
    if s[1] == 0 or e[1] == 0 then
      notify("no visual selection in " .. name .. " to replace", vim.log.levels.WARN)
      return
    end
    first, last = math.min(s[1], e[1]) - 1, math.min(math.max(s[1], e[1]), vim.api.nvim_buf_line_count(buf))
    msg = string.format("replaced lines %d–%d of %s with the block (%d lines)", first + 1, last, name, #lines)
  else
    first = vim.api.nvim_win_get_cursor(win)[1]
    last = first
    msg = string.format("put the block (%d lines) below line %d of %s", #lines, first, name)
  end
  vim.api.nvim_buf_call(buf, function()
    vim.cmd("let &g:undolevels = &g:undolevels")
  end)
  vim.api.nvim_buf_set_lines(buf, first, last, true, lines)
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { first + 1, 0 })
  notify(msg)
end

E.undo_turn = undo_turn

return E
