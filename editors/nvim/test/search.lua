-- Headless test of the model's searches in the chat, run by
-- editors/nvim/search_test.go in the workspace folder (the daemon's root).
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, OPENAI_BASE_URL, CTXLS_TEST_PHASE
-- ("search" or "search-resume") and CTXLS_TOOL_LINES (a file: the calls'
-- lines the first phase shows, for the second). Exits 0 on success, 1 with
-- a message on stderr otherwise.
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(phase)
local messages, fail, wait, chat_text, press = h.messages, h.fail, h.wait, h.chat_text, h.press

local work = vim.loop.fs_realpath(vim.loop.cwd())
local function real(path)
  return vim.loop.fs_realpath(path) or path
end

-- The calls' lines as the chat shows them.
local grep = "grep `loginRedirect` — 2 matches in 2 files"
local find = "find_files `**/*.go` — 3 files"
local list = "list_directory `auth` — 2 entries"

local call_lines = h.call_lines

local function row_of(buf, text)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l == text then
      return i
    end
  end
end

local function chat_win(chat)
  local win = vim.fn.bufwinid(chat)
  if win == -1 then
    fail("the chat is not in a window")
  end
  return win
end

-- quickfix_is checks the quickfix list: its title and its entries as
-- "file:lnum:text", files relative to the workspace.
local function quickfix_is(title, want)
  local q = vim.fn.getqflist({ title = 1, items = 1 })
  local got = {}
  for _, it in ipairs(q.items) do
    local name = real(vim.api.nvim_buf_get_name(it.bufnr))
    table.insert(got, string.format("%s:%d:%s", name:sub(#work + 2), it.lnum, it.text))
  end
  if q.title ~= title or not vim.deep_equal(got, want) then
    fail(string.format("the quickfix list %q:\n%s\nwant %q:\n%s", q.title, table.concat(got, "\n"), title, table.concat(want, "\n")))
  end
end

-- at checks that the current window shows file (relative to the
-- workspace) with the cursor on line lnum, reading text.
local function at(what, file, lnum, text)
  local name = real(vim.api.nvim_buf_get_name(0))
  local l = vim.fn.line(".")
  if name ~= work .. "/" .. file or l ~= lnum or (text and vim.fn.getline(".") ~= text) then
    fail(string.format("%s: at %s:%d %q, want %s:%d %q", what, name, l, vim.fn.getline("."), file, lnum, text or ""))
  end
end

local function quickfix_open()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.fn.getwininfo(win)[1].quickfix == 1 then
      return true
    end
  end
  return false
end

local ok, err = pcall(function()
  local ctxls = h.start({
    debounce = 0,
  })
  vim.o.columns, vim.o.lines = 160, 50

  if phase == "search" then
    vim.cmd("edit auth/handler.go")
    wait("the daemon", function()
      local c = ctxls.client()
      return c ~= nil and c.initialized
    end)
    -- Typed, not saved: only the buffer calls loginRedirect.
    vim.api.nvim_buf_set_lines(0, 2, 3, false, { "func handle() { loginRedirect() }" })
    local file_win = vim.api.nvim_get_current_win()
    vim.cmd("CtxlsAsk where is loginRedirect called?")
    local chat
    wait("the answer", function()
      chat = vim.fn.bufnr("ctxls://chat/")
      return chat >= 0 and chat_text():find("It is called from handle.", 1, true) ~= nil and not ctxls.busy()
    end)
    local lines = call_lines(chat)
    if not vim.deep_equal(lines, { "▾ " .. grep, "▾ " .. find, "▾ " .. list }) then
      fail("the calls' lines:\n" .. table.concat(lines, "\n") .. "\n\n" .. chat_text())
    end
    -- Folded, it says how many lines the results are; <CR> shows them.
    local win = chat_win(chat)
    local lnum = row_of(chat, "▾ " .. grep)
    local out, folded = h.expand(win, lnum, { "^▾ ", "^• " })
    if folded ~= "▸ " .. grep .. "  [3 lines]" then
      fail("the folded grep line: " .. folded)
    end
    local want = {
      "```",
      "auth/handler.go:3: func handle() { loginRedirect() }  (unsaved)",
      "",
      "auth/login.go:3: func loginRedirect() {}",
      "```",
    }
    if not vim.deep_equal(out, want) then
      fail("grep's results:\n" .. table.concat(out, "\n"))
    end

    -- gq on the line: the matches in the quickfix list, which opens.
    vim.api.nvim_win_set_cursor(win, { lnum, 0 })
    press("gq")
    quickfix_is("ctxls: " .. grep, {
      "auth/handler.go:3:func handle() { loginRedirect() }  (unsaved)",
      "auth/login.go:3:func loginRedirect() {}",
    })
    if not quickfix_open() then
      fail("gq did not open the quickfix window")
    end
    -- :cc lands on each: the unsaved match in the buffer as typed.
    vim.cmd("cc 1")
    at(":cc 1", "auth/handler.go", 3, "func handle() { loginRedirect() }")
    if vim.api.nvim_get_current_win() ~= file_win or not vim.bo.modified then
      fail(":cc 1 did not go to the file's window, its buffer unsaved")
    end
    vim.cmd("cc 2")
    at(":cc 2", "auth/login.go", 3, "func loginRedirect() {}")
    if vim.fn.bufwinid(chat) == -1 then
      fail("the chat window went")
    end

    -- <CR> on a result line in the chat opens the file at that line.
    vim.cmd("edit main.go")
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { lnum + 2, 0 })
    press("<CR>")
    at("<CR> on handler.go's match", "auth/handler.go", 3, "func handle() { loginRedirect() }")
    if vim.api.nvim_get_current_win() == win or vim.fn.bufwinid(chat) == -1 then
      fail("<CR> on a match replaced the chat")
    end
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { lnum + 4, 0 })
    press("<CR>")
    at("<CR> on login.go's match", "auth/login.go", 3)

    -- find_files' line: its files; list_directory's has nothing to list.
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { row_of(chat, "▾ " .. find), 0 })
    press("gq")
    local items = vim.fn.getqflist()
    if #items ~= 3 or vim.fn.getqflist({ title = 1 }).title ~= "ctxls: " .. find then
      fail("find_files in the quickfix list: " .. vim.inspect(items))
    end
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { row_of(chat, "▾ " .. list), 0 })
    press("gq")
    if not h.said("ctxls: list_directory `auth` has no matches or files to list") then
      fail("gq on list_directory's line")
    end

    -- :CtxlsQuickfix from a file: the last search of the session.
    vim.fn.setqflist({}, " ", { title = "other", items = {} })
    vim.cmd("wincmd t")
    if vim.bo.buftype ~= "" then
      fail("not in a file's window")
    end
    vim.cmd("CtxlsQuickfix")
    if vim.fn.getqflist({ title = 1 }).title ~= "ctxls: " .. find then
      fail(":CtxlsQuickfix from a file: " .. vim.fn.getqflist({ title = 1 }).title)
    end
    -- From the chat, on grep's line: grep's.
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { lnum + 1, 0 })
    vim.cmd("CtxlsQuickfix")
    if #vim.fn.getqflist() ~= 2 then
      fail(":CtxlsQuickfix on grep's results: " .. vim.inspect(vim.fn.getqflist()))
    end
    vim.fn.writefile(call_lines(chat), os.getenv("CTXLS_TOOL_LINES"))
  else
    -- In a new Neovim, the resumed session's history shows the same lines
    -- (the summary read from the stored results) and gq works on them.
    vim.cmd("edit main.go")
    wait("the daemon", function()
      local c = ctxls.client()
      return c ~= nil and c.initialized
    end)
    local chat = h.resume_first("It is called from handle.")
    local want = vim.fn.readfile(os.getenv("CTXLS_TOOL_LINES"))
    local got = call_lines(chat)
    if #want ~= 3 or not vim.deep_equal(got, want) then
      fail("the history's lines:\n" .. table.concat(got, "\n") .. "\nwant\n" .. table.concat(want, "\n"))
    end
    local win = chat_win(chat)
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { row_of(chat, "▾ " .. grep), 0 })
    press("gq")
    quickfix_is("ctxls: " .. grep, {
      "auth/handler.go:3:func handle() { loginRedirect() }  (unsaved)",
      "auth/login.go:3:func loginRedirect() {}",
    })
    vim.cmd("cc 2")
    at(":cc 2 from the history", "auth/login.go", 3, "func loginRedirect() {}")
  end
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qa!")
