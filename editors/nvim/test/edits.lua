-- Headless test of the model's edits in Neovim, run by edits_test.go
-- (TestNeovimEdits):
--   nvim --headless --clean -c 'set rtp+=.' -c 'luafile test/edits.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE (main.go, with
-- closed.txt beside it), OPENAI_BASE_URL. The fake model's replies are
-- queued by the Go test; this file acts as the person at the keyboard.
-- Exits 0 on success, 1 with a message on stderr otherwise.
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")("edits")
local messages, fail, wait, text, said, chat_text, press = h.messages, h.fail, h.wait, h.text, h.said, h.chat_text, h.press

local function disk(path)
  local f = io.open(path)
  if not f then
    return nil
  end
  local t = f:read("*a")
  f:close()
  return t
end

local expect = h.expect

local ok, err = pcall(function()
  -- The default debounce: the daemon must get each change before the
  -- next edit is computed, as a user's setup has it.
  local ctxls = h.start({
    tool_permission_timeout_seconds = 30,
  })
  local P = require("ctxls.protocol")
  local file = os.getenv("CTXLS_TEST_FILE")
  local dir = vim.fn.fnamemodify(file, ":h")
  vim.cmd("cd " .. vim.fn.fnameescape(dir))
  vim.cmd("edit " .. file)
  local main, main_win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)
  local on_disk = disk(file)

  -- document is the text the daemon holds for buf.
  local function document(buf)
    local result
    ctxls.command(P.commands.document_get, { uri = vim.uri_from_bufnr(buf) }, function(r)
      result = r
    end)
    wait("ctxls.document.get", function()
      return result ~= nil
    end)
    return result.text
  end
  local function in_sync(buf, when)
    wait("the daemon to hold the buffer's text " .. when, function()
      local t = text(buf) .. "\n"
      return document(buf) == t
    end, 3000)
  end

  -- The review on screen once it is the next one (n decided before it).
  -- The n-th review shown (n decided before it): the model's call `label`
  -- (e1, e2, … in the fake provider's script). A review carries ctxls's
  -- own id for the call (ANSWER:INDEX, unique in the session), never the
  -- provider's; each review's id is new.
  -- A review is announced, never opened by itself (the keyboard stays
  -- where it is): the person opens it with :CtxlsReview.
  local seen = {}
  local function review(n, label)
    wait("the review of " .. label, function()
      local _, waiting, decided = ctxls.reviewing()
      return waiting > 0 and decided == n
    end)
    expect(ctxls.reviewing() == nil and #vim.api.nvim_list_tabpages() == 1, "the review of " .. label .. " opened by itself")
    vim.cmd("CtxlsReview")
    local p = ctxls.reviewing()
    expect(p ~= nil and not seen[p.id], "the review of " .. label .. " is not shown after :CtxlsReview")
    expect(p.id ~= label and p.id:match("^%d+:%d+$") ~= nil, "the review of " .. label .. " has the id " .. tostring(p.id))
    seen[p.id] = true
    return ctxls.reviewing()
  end

  -- 1. An unsaved change, then a turn whose edits are shown as diffs.
  vim.api.nvim_buf_set_lines(main, 0, 0, false, { "// UNSAVED LINE" })
  local before = text(main)
  vim.cmd("CtxlsAsk edit main")
  local p = review(0, "e1")
  local wins = require("ctxls.review").windows()
  expect(wins and #wins == 3 and #vim.api.nvim_tabpage_list_wins(0) == 3, "the review tab has not its three windows")
  expect(#vim.api.nvim_list_tabpages() == 2 and vim.api.nvim_get_current_tabpage() == vim.api.nvim_win_get_tabpage(wins[1]),
    "the review is not in a new tab of its own")
  local left, right = vim.api.nvim_win_get_buf(wins[1]), vim.api.nvim_win_get_buf(wins[2])
  expect(text(left) == before, "the review's current text is not the unsaved buffer:\n" .. text(left))
  local after_e1 = before:gsub('println%("hello"%)', 'println("hello, world")')
  expect(text(right) == after_e1, "the review's proposed text:\n" .. text(right))
  for _, w in ipairs({ wins[1], wins[2] }) do
    expect(vim.api.nvim_win_get_option(w, "diff"), "a review window is not in diff mode")
  end
  expect(vim.api.nvim_buf_get_option(left, "buftype") == "nofile" and vim.api.nvim_buf_get_option(right, "buftype") == "nofile",
    "the review buffers are not scratch buffers")
  expect(vim.api.nvim_buf_get_option(right, "filetype") == "go", "the proposed text is not highlighted as Go")
  expect(vim.api.nvim_get_current_win() == wins[2], "the cursor is not in the proposed text")
  expect(text(vim.api.nvim_win_get_buf(wins[3])) == "ctxls: the model wants to edit main.go (+1 −1 lines)"
    and vim.api.nvim_win_get_option(wins[3], "statusline"):find("ga accept · gA accept all in this turn · gr reject", 1, true),
    "the review's header does not say what the edit is and which keys decide")
  expect(vim.api.nvim_win_get_option(wins[1], "statusline") == " main.go — now, unsaved edits included", "the current text's status line")
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  expect(qf.title == "ctxls: 1 edit to review" and #qf.items == 1 and vim.api.nvim_buf_get_name(qf.items[1].bufnr) == file
    and qf.items[1].lnum == 5 and qf.items[1].text:find("edit main.go (+1 −1 lines)", 1, true),
    "the quickfix list: " .. vim.inspect(qf))
  expect(chat_text():find('• edit_file `{"path":"main.go",', 1, true) and chat_text():find("— waiting for your permission", 1, true),
    "the call's line does not wait:\n" .. chat_text())
  expect(said("ctxls: to review (:CtxlsReview): edit main.go (+1 −1 lines)"), "the review was not announced")
  press("ga")
  -- The second edit (computed against the first's result) is rejected.
  p = review(1, "e2")
  expect(#vim.api.nvim_list_tabpages() == 2, "the first review's tab was not closed")
  expect(text(main) == after_e1, "the accepted edit is not in the buffer:\n" .. text(main))
  expect(vim.api.nvim_buf_get_option(main, "modified"), "the edited buffer is not modified")
  expect(disk(file) == on_disk, "the file was written to disk")
  expect(text(vim.api.nvim_win_get_buf(require("ctxls.review").windows()[1])) == after_e1,
    "the second review does not start from the first edit's result")
  press("gr")
  wait("the first turn's end", function()
    return chat_text():find("Done A.", 1, true) and not ctxls.busy()
  end)
  expect(text(main) == after_e1, "the rejected edit changed the buffer:\n" .. text(main))
  expect(#vim.api.nvim_list_tabpages() == 1, "a review tab is left open")
  local qf_now = vim.fn.getqflist({ title = 1, items = 1 })
  expect(qf_now.title == "ctxls: no edits to review" and #qf_now.items == 0, "the quickfix list after: " .. vim.inspect(qf_now))
  expect(chat_text():find('▾ edit_file `{"path":"main.go","old_string":"println(\\"hello\\")",', 1, true), "the accepted call's line:\n" .. chat_text())
  expect(chat_text():find("— declined", 1, true), "the rejected call is not declined:\n" .. chat_text())
  in_sync(main, "after the edit")

  -- 2. u takes the edit back (one step; the unsaved line stays), <C-r>
  -- makes it again; the daemon follows both.
  vim.api.nvim_set_current_win(main_win)
  press("u")
  expect(text(main) == before, "u did not restore the text before the edit:\n" .. text(main))
  in_sync(main, "after u")
  press("<C-r>")
  expect(text(main) == after_e1, "<C-r> did not make the edit again")
  in_sync(main, "after <C-r>")

  -- 3. :CtxlsApplyBlock puts the answer's code block below the cursor
  -- line of the file's window; with ! it replaces the visual selection.
  local chat = vim.fn.bufnr("ctxls://chat/")
  local chat_win = vim.fn.bufwinid(chat)
  local block_row
  for i, l in ipairs(vim.api.nvim_buf_get_lines(chat, 0, -1, false)) do
    if l == "var fromChat = 1" then
      block_row = i
    end
  end
  expect(block_row, "the answer's code block is not in the chat:\n" .. chat_text())
  vim.api.nvim_win_set_cursor(main_win, { 2, 0 })
  vim.api.nvim_set_current_win(chat_win)
  vim.api.nvim_win_set_cursor(chat_win, { block_row, 0 })
  vim.cmd("CtxlsApplyBlock")
  local want = vim.split(after_e1, "\n", { plain = true })
  table.insert(want, 3, "// from the chat")
  table.insert(want, 4, "var fromChat = 1")
  expect(text(main) == table.concat(want, "\n"), "the block was not put below line 2:\n" .. text(main))
  expect(vim.api.nvim_get_current_win() == main_win and vim.api.nvim_win_get_cursor(main_win)[1] == 3,
    "the cursor is not on the block's first line")
  press("u")
  expect(text(main) == after_e1, "u did not take the block back")
  -- Select lines 1-2 (V j Esc), then replace them from the chat.
  vim.api.nvim_win_set_cursor(main_win, { 1, 0 })
  press("Vj<Esc>")
  vim.api.nvim_set_current_win(chat_win)
  vim.api.nvim_win_set_cursor(chat_win, { block_row - 1, 0 }) -- on the block's first line
  vim.cmd("CtxlsApplyBlock!")
  want = vim.split(after_e1, "\n", { plain = true })
  want[1], want[2] = "// from the chat", "var fromChat = 1"
  expect(text(main) == table.concat(want, "\n"), "the block did not replace the selection:\n" .. text(main))
  press("u")
  expect(text(main) == after_e1, "u did not take the replacement back")
  -- Outside a block it says so.
  vim.api.nvim_set_current_win(chat_win)
  vim.api.nvim_win_set_cursor(chat_win, { 1, 0 })
  vim.cmd("CtxlsApplyBlock")
  expect(said("the cursor is not in a code block"), "no word outside a block")
  wait("the model's title", function()
    return vim.api.nvim_buf_get_lines(chat, 0, 1, false)[1] == "# Edit session"
  end)
  in_sync(main, "before the second turn")

  -- 4. Typed in the file during the review (a line above the edit):
  -- accepted, the edit lands where its text now is, the typed line kept.
  -- Closing the review's tab rejects. gA accepts this and
  -- the rest of the turn's edits, a new file among them, unasked.
  vim.api.nvim_set_current_win(chat_win)
  vim.cmd("CtxlsAsk more edits")
  review(2, "e3")
  vim.api.nvim_buf_set_lines(main, 0, 0, false, { "// TYPED DURING THE REVIEW" })
  local typed = text(main)
  vim.cmd("CtxlsAccept")
  review(3, "e4")
  typed = typed:gsub("package main", "package main // typed over")
  expect(text(main) == typed, "the edit accepted after typing is not in the buffer beside the typing:\n" .. text(main))
  vim.cmd("tabclose")
  review(4, "e5")
  press("gA")
  wait("the second turn's end", function()
    return chat_text():find("Done B.", 1, true) and not ctxls.busy()
  end)
  local _, waiting, decided = ctxls.reviewing()
  expect(decided == 5 and waiting == 0, string.format("%d reviews decided, %d waiting: after gA the rest is not asked", decided, waiting))
  local want_main = typed:gsub("hello, world", "hello, all"):gsub("func main%(%) {", "func main() { // all")
  expect(text(main) == want_main, "main.go after the second turn:\n" .. text(main) .. "\nwant\n" .. want_main)
  local new = require("ctxls.edits").find_buf(dir .. "/pkg/new.go")
  expect(new and vim.api.nvim_buf_is_loaded(new) and text(new) == "package pkg" and vim.api.nvim_buf_get_option(new, "modified"),
    "the created file's buffer: " .. (new and text(new) or "none"))
  expect(disk(dir .. "/pkg/new.go") == nil, "the new file was written to disk")
  expect(disk(file) == on_disk, "main.go was written to disk")
  in_sync(main, "after the second turn")
  in_sync(new, "for the new file")

  -- 5. Auto: edits of a file not open are applied at once, to a buffer
  -- opened for them; the disk is left alone.
  vim.cmd("CtxlsReviewMode auto")
  wait("the review mode", function()
    return said("review mode auto")
  end)
  local closed_disk = disk(dir .. "/closed.txt")
  -- A change made just before (no command between it and the edit to
  -- close its undo block).
  vim.api.nvim_buf_set_lines(main, -1, -1, false, { "// LAST LINE" })
  local before_auto = text(main)
  vim.cmd("CtxlsAsk auto edits")
  wait("the third turn's end", function()
    return chat_text():find("Done C.", 1, true) and not ctxls.busy()
  end)
  _, _, decided = ctxls.reviewing()
  expect(decided == 5, "auto mode showed a review")
  local closed = require("ctxls.edits").find_buf(dir .. "/closed.txt")
  expect(closed and text(closed) == "1\n2" and vim.api.nvim_buf_get_option(closed, "modified"),
    "closed.txt's buffer: " .. (closed and text(closed) or "none"))
  expect(disk(dir .. "/closed.txt") == closed_disk, "closed.txt was written to disk")
  in_sync(closed, "for closed.txt")
  expect(text(main) == before_auto:gsub("hello, all", "hello, auto"), "main.go after the auto edit:\n" .. text(main))
  vim.api.nvim_set_current_win(main_win)
  press("u")
  expect(text(main) == before_auto, "u did not take back the auto edit alone:\n" .. text(main))

  -- 6. An edit of two changes, one left out: in the review, gs on the
  -- first change (the cursor is on it) takes the current text's lines
  -- back into the proposal; ga accepts the rest.
  vim.cmd("CtxlsReviewMode ask")
  wait("the review mode ask", function()
    return said("review mode ask")
  end)
  vim.cmd("CtxlsAsk capitals")
  review(5, "e10")
  local proposal = vim.api.nvim_win_get_buf(require("ctxls.review").windows()[2])
  expect(text(proposal) == "A\nb\nc\nd\ne\nf\ng\nH\ni", "the proposal:\n" .. text(proposal))
  press("gs")
  expect(text(proposal) == "a\nb\nc\nd\ne\nf\ng\nH\ni", "gs did not leave the first change out:\n" .. text(proposal))
  press("ga")
  -- 7. The next edit's own text changed in the file during its review:
  -- accepted, it is refused, and the person is told why.
  review(6, "e11")
  local letters = require("ctxls.edits").find_buf(dir .. "/letters.txt")
  expect(letters and text(letters) == "a\nb\nc\nd\ne\nf\ng\nH\ni", "letters.txt after the part accepted: " .. (letters and text(letters) or "none"))
  vim.api.nvim_buf_set_lines(letters, 8, 9, false, { "i changed" })
  press("ga")
  wait("the fourth turn's end", function()
    return chat_text():find("Done D.", 1, true) and not ctxls.busy()
  end)
  expect(text(letters) == "a\nb\nc\nd\ne\nf\ng\nH\ni changed", "letters.txt after the refused edit: " .. text(letters))
  expect(said("the model's edit of " .. dir .. "/letters.txt was not applied: the text it replaces was changed in the editor"),
    "the person was not told why the edit was refused")
  expect(chat_text():find("ctxls reviewed: edit letters.txt (+8 −8 lines) → accepted in part", 1, true), "the review's line:\n" .. chat_text())
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
