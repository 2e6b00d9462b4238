-- Headless tests of the chat buffer, run by chat_test.go, one phase per
-- Neovim process:
--   nvim --headless --clean -c 'set rtp+=.' -c 'luafile test/chat.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_STORE_DSN (optional: the
-- daemon's --store), CTXLS_TEST_FILE, OPENAI_BASE_URL, CTXLS_TEST_PHASE,
-- CTXLS_SHARED (a file the phases of one test pass a session id in).
-- Exits 0 on success, 1 with a message on stderr otherwise.
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(phase)
local messages, fail, wait, text, has, call, chat_bufs = h.messages, h.fail, h.wait, h.text, h.has, h.call, h.chat_bufs

local function count(buf, s)
  local n, at = 0, 1
  local t = text(buf)
  while true do
    local i = t:find(s, at, true)
    if not i then
      return n
    end
    n, at = n + 1, i + #s
  end
end

local shared = os.getenv("CTXLS_SHARED")
local function put_shared(s)
  local f = assert(io.open(shared .. ".tmp", "w"))
  f:write(s)
  f:close()
  os.rename(shared .. ".tmp", shared)
end
local function get_shared()
  local f = assert(io.open(shared))
  local s = f:read("*a")
  f:close()
  return s
end

local ask = h.ask

-- underlined: row (1-based) of buf is marked as an image's line, a link.
local function underlined(buf, row)
  local ns = vim.api.nvim_get_namespaces().ctxls_images
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
    if m[4].hl_group == "CtxlsImage" and m[4].end_col == #vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] then
      return true
    end
  end
  return false
end

local ok, err = pcall(function()
  vim.cmd("runtime plugin/ctxls.lua")
  local ctxls = require("ctxls")
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  local cmd = { os.getenv("CTXLS_BIN"), "serve", "--data-dir", os.getenv("CTXLS_DATA_DIR") }
  local dsn = os.getenv("CTXLS_STORE_DSN")
  if dsn and dsn ~= "" then
    vim.list_extend(cmd, { "--store", dsn })
  end
  ctxls.setup({
    cmd = cmd,
    provider = { baseURL = os.getenv("OPENAI_BASE_URL"), model = "test-model" },
    debounce = 0,
    log_file = false,
    view_idle_ms = 100,
  })
  local file = os.getenv("CTXLS_TEST_FILE")
  vim.cmd("cd " .. vim.fn.fnameescape(vim.fn.fnamemodify(file, ":h")))
  vim.cmd("edit " .. file)
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)

  if phase == "live-a" or phase == "sqlite-a" then
    -- Neovim A asks, then keeps its chat open while another Neovim (with a
    -- daemon of its own on the same store: PostgreSQL, or SQLite on the same
    -- data directory) asks in the same session: the new question and
    -- answer appear in A's chat live (ctxls/sessionUpdated), without A
    -- gaining focus or entering the chat.
    local buf = ask(ctxls, "question in A", "answer in A")
    local id = vim.api.nvim_buf_get_var(buf, "ctxls_session")
    -- With SQLite too nothing reads the chat again but the daemon's notice:
    -- Neovim does not gain focus, nor is the chat entered.
    local guard = phase == "sqlite-a"
      and vim.api.nvim_create_autocmd({ "FocusGained", "BufEnter", "WinEnter" }, {
        callback = function(a)
          if a.event == "FocusGained" or vim.api.nvim_get_current_buf() == buf then
            fail("the chat would be read again on " .. a.event)
          end
        end,
      })
    put_shared(id)
    -- seen_streaming: B's answer was shown while it was being written.
    local seen_streaming = false
    -- B's question, under the line naming the file that went with it
    -- (B's active file, as the daemon kept it with the question).
    local function b_question(rest)
      local t = text(buf)
      return t:find("## You\n\n_with [^\n]+_\n\nquestion from B" .. rest) ~= nil
    end
    local function shows_b()
      if b_question("\n\n## ctxls\n\n") and has(buf, "_answering elsewhere…_") then
        seen_streaming = true
      end
      return b_question("") and has(buf, "## ctxls\n\nanswer from B")
    end
    -- The chat window's cursor: where the user reads stays (sqlite-a), the
    -- end is followed (live-a).
    local chat_win = vim.fn.bufwinid(buf)
    if phase == "sqlite-a" then
      vim.api.nvim_win_set_cursor(chat_win, { 4, 0 })
    end
    wait("B's answer being written", function()
      shows_b()
      return seen_streaming
    end, 30000)
    if phase == "live-a" then
      -- Asked from the compose window meanwhile: the daemon refuses (B's
      -- turn runs), the user is told, and the question goes back there.
      vim.cmd("CtxlsChat")
      local keys = vim.api.nvim_replace_termcodes("itoo early<C-s>", true, false, true)
      vim.api.nvim_feedkeys(keys, "x", false)
      wait("the refusal", function()
        return h.said("already running")
      end)
      wait("the question back in the compose window", function()
        return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") == "too early"
      end)
      if vim.api.nvim_buf_get_name(0) ~= "ctxls://compose" then
        fail("not in the compose window: " .. vim.api.nvim_buf_get_name(0))
      end
      vim.cmd("stopinsert")
    end
    wait("the turn asked in B", shows_b, 30000)
    if guard then
      vim.api.nvim_del_autocmd(guard)
    end
    local want_row = phase == "sqlite-a" and 4 or vim.api.nvim_buf_line_count(buf)
    if vim.api.nvim_win_get_cursor(chat_win)[1] ~= want_row then
      fail(string.format("the chat window's cursor is on line %d, want %d", vim.api.nvim_win_get_cursor(chat_win)[1], want_row))
    end
    if phase == "live-a" and has(buf, "too early") then
      fail("the refused question stays in the chat, which shows the store:\n" .. text(buf))
    end
    if has(buf, "_answering elsewhere…_") then
      fail("B's ended answer is still marked as being written:\n" .. text(buf))
    end
    if count(buf, "question in A") ~= 1 or count(buf, "question from B") ~= 1 or count(buf, "answer from B") ~= 1 then
      fail("the chat after the turn made elsewhere:\n" .. text(buf))
    end
    local t = text(buf)
    if t:find("question in A", 1, true) > t:find("question from B", 1, true) then
      fail("the turns are out of order:\n" .. t)
    end
    -- A asks again in the same session: its turn streams in as before,
    -- after B's, and nothing is shown twice.
    buf = ask(ctxls, "again in A", "second answer in A")
    if count(buf, "question from B") ~= 1 or count(buf, "again in A") ~= 1 or count(buf, "second answer in A") ~= 1 then
      fail("the chat after A's second turn:\n" .. text(buf))
    end
    vim.wait(500) -- a late notice changes nothing
    if count(buf, "again in A") ~= 1 or not has(buf, "second answer in A") then
      fail("the chat after A's second turn, later:\n" .. text(buf))
    end
  elseif phase == "live-b" then
    -- Another Neovim resumes A's session from the picker and asks.
    local id = get_shared()
    vim.ui.select = function(items, _, on_choice)
      for _, s in ipairs(items) do
        if s.id == id then
          return on_choice(s)
        end
      end
      fail("the picker lacks session " .. id)
    end
    vim.cmd("CtxlsSessions")
    wait("the resumed chat", function()
      local b = chat_bufs()[1]
      return b ~= nil and has(b, "answer in A")
    end)
    ask(ctxls, "question from B", "answer from B")
  elseif phase == "stop" then
    -- An answer stopped with :CtxlsCancel, and one cut off when its daemon
    -- died (killed mid-answer); stop-reload shows both from the store.
    vim.cmd("CtxlsAsk stop me")
    local buf
    wait("the partial answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "stopped part")
    end)
    vim.cmd("CtxlsCancel")
    wait("the cancelled mark", function()
      return has(buf, "stopped part\n\n_cancelled_") and not ctxls.busy()
    end)
    vim.cmd("CtxlsNew")
    wait("the new session", function()
      return #chat_bufs() == 2
    end)
    vim.cmd("CtxlsAsk crash me")
    wait("the second partial answer", function()
      for _, b in ipairs(chat_bufs()) do
        if has(b, "crashed part") then
          return true
        end
      end
      return false
    end)
    vim.wait(1500) -- a checkpoint saves the partial answer (every 500 ms)
    -- Neovim quits at once: it sees the daemon die (and reaps it) on its
    -- way out. (Else the init of a container may leave the dead daemon a
    -- zombie, whose process id the next daemon takes for one still
    -- writing the answer: "answering elsewhere".)
    vim.loop.kill(assert(h.daemon_pid(), "the daemon's process"), 9)
  elseif phase == "stop-reload" then
    local function resume(question)
      vim.ui.select = function(items, _, on_choice)
        for _, s in ipairs(items) do
          if s.title == question then
            return on_choice(s)
          end
        end
        fail("the picker lacks " .. question .. ": " .. vim.inspect(items))
      end
      vim.cmd("CtxlsSessions")
      local buf
      wait("the resumed chat of " .. question, function()
        for _, b in ipairs(chat_bufs()) do
          if h.has_question(b, question) then
            buf = b
          end
        end
        return buf ~= nil
      end)
      return buf
    end
    local stopped = resume("stop me")
    if not has(stopped, "stopped part\n\n_cancelled_") or has(stopped, "_interrupted") then
      fail("the stopped answer after a reload:\n" .. text(stopped))
    end
    local crashed = resume("crash me")
    if not has(crashed, "crashed part\n\n_interrupted: the daemon stopped before the answer ended_") or has(crashed, "_cancelled_") then
      fail("the answer cut off by the daemon's death after a reload:\n" .. text(crashed))
    end
  elseif phase == "model" then
    -- Token usage under each answer and for the session in the chat's
    -- header, with the model; :CtxlsModel picks another from the
    -- provider's list, takes one typed, goes back to the default (!) or
    -- takes a name given.
    local buf = ask(ctxls, "first question", "first answer")
    local function line2()
      return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1]
    end
    if not has(buf, "first answer\n\n_tokens: 1,200 in (200 cached) · 30 out_\n") then
      fail("the first answer's usage:\n" .. text(buf))
    end
    wait("the header after the first turn", function()
      return line2() == "_model: test-model (default) · this session: 1,200 in (200 cached) · 30 out_"
    end)
    local offered
    vim.ui.select = function(items, opts, on_choice)
      if vim.tbl_contains(items, "This session") then
        on_choice("This session") -- then: for this session only
        return
      end
      offered = { items = items, prompt = opts.prompt, shown = vim.tbl_map(opts.format_item, items) }
      on_choice("big-model")
    end
    vim.cmd("CtxlsModel")
    wait("the chosen model in the header", function()
      return line2():find("^_model: big%-model · this session: ") ~= nil
    end)
    if not vim.tbl_contains(offered.items, "test-model") or not vim.tbl_contains(offered.items, "big-model")
      or not offered.prompt:find("now test-model", 1, true) or not vim.tbl_contains(offered.shown, "test-model  (current, the provider's default)") then
      fail("the models offered: " .. vim.inspect(offered))
    end
    buf = ask(ctxls, "second question", "second answer")
    if not has(buf, "second answer\n\n_tokens: 500 in · 20 out_\n") then
      fail("the second answer's usage:\n" .. text(buf))
    end
    wait("the session's usage", function()
      return line2() == "_model: big-model · this session: 1,700 in (200 cached) · 50 out_"
    end)
    -- A name typed in (for this session only).
    vim.ui.select = function(items, _, on_choice)
      on_choice(vim.tbl_contains(items, "This session") and "This session" or items[#items])
    end
    vim.ui.input = function(_, on_confirm)
      on_confirm("typed-model")
    end
    vim.cmd("CtxlsModel")
    wait("the typed model", function()
      return line2():find("^_model: typed%-model · ") ~= nil
    end)
    vim.cmd("CtxlsModel!")
    wait("the default model", function()
      return line2():find("^_model: test%-model %(default%) · ") ~= nil
    end)
    vim.cmd("CtxlsModel big-model")
    wait("the model given", function()
      return line2():find("^_model: big%-model · ") ~= nil
    end)
    if ctxls.model() ~= "big-model" then
      fail("require('ctxls').model(): " .. ctxls.model())
    end
    -- (the model's title, asked after the first answer, is in)
    wait("the model's title", function()
      return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "# Usage session"
    end)
    put_shared(text(buf))
  elseif phase == "model-reload" then
    -- In a new Neovim the resumed session's chat shows the same.
    local buf = h.resume_first("second answer")
    -- (The file that went with a question is kept with it: the line is
    -- the same.)
    local before = get_shared()
    if not before:find("_with main.go_", 1, true) then
      fail("the chat before the reload names no file:\n" .. before)
    end
    if text(buf) ~= before then
      fail("the chat after a reload:\n" .. text(buf) .. "\n\nbefore:\n" .. before)
    end
  elseif phase == "compose" then
    -- :CtxlsChat opens the compose window: Enter inserts a new line,
    -- Ctrl-S sends (Enter in Normal mode too); the window's status line
    -- says so and what goes; a question sent while a turn runs is kept.
    local keys = function(k)
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "x", false)
    end
    local source = vim.api.nvim_get_current_win()
    vim.cmd("3,4CtxlsChat")
    local compose = vim.api.nvim_get_current_buf()
    if vim.api.nvim_buf_get_name(compose) ~= "ctxls://compose" or vim.api.nvim_get_current_win() == source then
      fail("the cursor is not in the compose window: " .. vim.api.nvim_buf_get_name(compose))
    end
    local status = vim.api.nvim_eval_statusline(vim.wo.statusline, { winid = 0, fillchar = " ", maxwidth = 200 }).str
    if vim.trim(status) ~= "ctxls · Ctrl-S sends · Enter: new line · with main.go:3-4" then
      fail("the compose window's status line: " .. status)
    end
    keys("ifirst line<CR>second line<C-s>")
    local buf
    wait("the first answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "## You\n\n_with main.go:3-4_\n\nfirst line\nsecond line\n\n## ctxls\n\nanswer one") and not ctxls.busy()
    end)
    if vim.api.nvim_get_current_buf() ~= compose then
      fail("the cursor left the compose window")
    end
    if table.concat(vim.api.nvim_buf_get_lines(compose, 0, -1, false), "\n") ~= "" then
      fail("the compose buffer was not emptied")
    end
    status = vim.api.nvim_eval_statusline(vim.wo.statusline, { winid = 0, fillchar = " ", maxwidth = 200 }).str
    if vim.trim(status) ~= "ctxls · Ctrl-S sends · Enter: new line · with main.go" then
      fail("the range went with the second question too: " .. status)
    end
    -- Enter in Normal mode sends; the next question, sent while that
    -- answer streams, is kept.
    keys("<Esc>ggdGislow question<Esc><CR>")
    wait("the slow answer to start", function()
      return has(buf, "slow question") and ctxls.busy()
    end)
    keys("ggdGinext<CR>question<C-s>")
    wait("the warning", function()
      return h.said("a turn is running: the question is kept")
    end)
    if table.concat(vim.api.nvim_buf_get_lines(compose, 0, -1, false), "\n") ~= "next\nquestion" then
      fail("the question sent during a turn was not kept: " .. vim.inspect(vim.api.nvim_buf_get_lines(compose, 0, -1, false)))
    end
    wait("the slow answer", function()
      return has(buf, "slow answer") and not ctxls.busy()
    end)
    keys("<C-s>")
    wait("the third answer", function()
      return has(buf, "next\nquestion\n\n## ctxls\n\nanswer three") and not ctxls.busy()
    end)
  elseif phase == "history" then
    -- In the compose window Ctrl-P brings back the questions sent, newest
    -- first (the one of several lines whole, the oldest staying), Ctrl-N
    -- later ones and past the newest the draft; in Insert and Normal mode.
    -- While Ctrl-X Ctrl-N's completion menu is open, Ctrl-P moves in it
    -- (Neovim leaves the keys of a running completion unmapped).
    local keys = function(k)
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(k, true, false, true), "x", false)
    end
    vim.cmd("CtxlsChat")
    local compose = vim.api.nvim_get_current_buf()
    local function shows(want, what)
      local got = table.concat(vim.api.nvim_buf_get_lines(compose, 0, -1, false), "\n")
      if got ~= want then
        fail(what .. ": the compose window shows " .. vim.inspect(got) .. ", want " .. vim.inspect(want))
      end
    end
    local buf
    local function answered(n)
      wait("answer " .. n, function()
        buf = chat_bufs()[1]
        return buf ~= nil and has(buf, "answer " .. n) and not ctxls.busy()
      end)
    end
    keys("ifirst<CR>question<C-s>")
    answered("one")
    keys("iquestion two<C-s>")
    answered("two")
    keys("ia draft<C-p>")
    shows("question two", "Ctrl-P in Insert mode")
    keys("a<C-p>")
    shows("first\nquestion", "Ctrl-P again")
    keys("a<C-p>")
    shows("first\nquestion", "Ctrl-P at the oldest")
    keys("<C-n>")
    shows("question two", "Ctrl-N in Normal mode")
    keys("<C-n>")
    shows("a draft", "Ctrl-N past the newest")
    keys("<C-n>")
    shows("a draft", "Ctrl-N at the draft")
    -- A question brought back, edited and sent.
    keys("<C-p>A again<C-s>")
    answered("three")
    shows("", "sent")
    -- :CtxlsAsk's questions are there too.
    vim.cmd("CtxlsAsk asked on the command line")
    answered("four")
    vim.api.nvim_set_current_win(vim.fn.bufwinid(compose))
    keys("iquestion quest qu<C-x><C-n><C-p>")
    local line = vim.api.nvim_buf_get_lines(compose, 0, -1, false)[1]
    if not line:find("^question quest qu") then
      fail("Ctrl-P with the completion menu open did not move in it: the compose window shows " .. vim.inspect(line))
    end
    keys("ggdG")
  elseif phase == "history-again" then
    -- A new Neovim brings back the last one's questions.
    vim.cmd("CtxlsChat")
    local compose = vim.api.nvim_get_current_buf()
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("i<C-p><C-p>", true, false, true), "x", false)
    local got = table.concat(vim.api.nvim_buf_get_lines(compose, 0, -1, false), "\n")
    if got ~= "question two again" then
      fail("Ctrl-P twice in a new Neovim: " .. vim.inspect(got))
    end
  elseif phase == "rewind" then
    -- :CtxlsRetry asks a failed answer's question again in its place;
    -- :CtxlsEdit, with the cursor in the first turn, opens it in the
    -- compose window, and sent it replaces that turn and the ones after.
    local buf = ask(ctxls, "first question", "first answer")
    vim.cmd("CtxlsAsk second question")
    wait("the failure", function()
      return has(buf, "_error: the provider at ") and not ctxls.busy()
    end)
    vim.cmd("CtxlsRetry")
    wait("the retried answer", function()
      return has(buf, "retried answer") and not ctxls.busy()
    end)
    local t = text(buf)
    if count(buf, "second question") ~= 1 or t:find("_error", 1, true) or not t:find("second question\n\n## ctxls\n\nretried answer", 1, true) then
      fail("the chat after :CtxlsRetry:\n" .. t)
    end
    -- :CtxlsEdit from the first answer's line.
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    local row
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l == "first answer" then
        row = i
      end
    end
    vim.api.nvim_win_set_cursor(0, { row, 0 })
    vim.cmd("CtxlsEdit")
    wait("the compose window", function()
      return vim.api.nvim_buf_get_name(0) == "ctxls://compose"
    end)
    if vim.api.nvim_buf_get_name(0) ~= "ctxls://compose" or table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") ~= "first question" then
      fail("the compose window after :CtxlsEdit: " .. vim.api.nvim_buf_get_name(0) .. " " .. vim.inspect(vim.api.nvim_buf_get_lines(0, 0, -1, false)))
    end
    local status = vim.trim(vim.api.nvim_eval_statusline(vim.wo.statusline, { winid = 0, fillchar = " ", maxwidth = 300 }).str)
    if not status:find("asked again in place of question 1, whose turn and later ones go", 1, true) then
      fail("the compose window's status line: " .. status)
    end
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "edited question" })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<C-s>", true, false, true), "x", false)
    wait("the edited turn's answer", function()
      return has(buf, "edited answer") and not ctxls.busy()
    end)
    t = text(buf)
    if t:find("first question", 1, true) or t:find("second question", 1, true) or t:find("retried answer", 1, true) or count(buf, "## You") ~= 1 then
      fail("the chat after :CtxlsEdit:\n" .. t)
    end
    local stored = {}
    for _, m in ipairs(call("session_show", { sessionId = vim.api.nvim_buf_get_var(buf, "ctxls_session") }).messages) do
      table.insert(stored, m.role .. ": " .. m.content)
    end
    if table.concat(stored, "|") ~= "user: edited question|assistant: edited answer" then
      fail("the session after :CtxlsEdit: " .. vim.inspect(stored))
    end
    -- The session's usage no longer counts the turns that went.
    wait("the header's usage", function()
      return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == "_model: test-model (default) · this session: 10 in · 2 out_"
    end)
  elseif phase == "pickers" then
    -- Two sessions the model titled alike: the picker tells them apart by
    -- their first questions, counts questions and says how long ago;
    -- deleting the current one resumes the most recent remaining one in
    -- its chat window.
    local alpha = ask(ctxls, "alpha question", "alpha answer")
    wait("alpha's title", function()
      return vim.api.nvim_buf_get_lines(alpha, 0, 1, false)[1] == "# Same title"
    end)
    ask(ctxls, "alpha again", "alpha second")
    vim.cmd("CtxlsNew")
    wait("the new session's chat", function()
      return #chat_bufs() == 2
    end)
    local beta = ask(ctxls, "beta question", "beta answer")
    wait("beta's title", function()
      return vim.api.nvim_buf_get_lines(beta, 0, 1, false)[1] == "# Same title"
    end)
    local shown
    vim.ui.select = function(items, opts, on_choice)
      if items[1] == "Delete" then
        return on_choice("Delete")
      end
      shown = vim.tbl_map(opts.format_item, items)
      on_choice(items[1]) -- the most recent: beta, the current one
    end
    vim.cmd("CtxlsDelete")
    local want = { "Same title — beta question  (1 question, just now)", "Same title — alpha question  (2 questions, just now)" }
    wait("the picker", function()
      return shown ~= nil
    end)
    if not vim.deep_equal(shown, want) then
      fail("the picker shows " .. vim.inspect(shown) .. ", want " .. vim.inspect(want))
    end
    wait("alpha resumed in the chat window", function()
      local b = vim.api.nvim_win_get_buf(vim.fn.bufwinid(alpha) ~= -1 and vim.fn.bufwinid(alpha) or 0)
      return b == alpha and not vim.api.nvim_buf_is_valid(beta)
    end)
    if not has(alpha, "alpha again") or ctxls.title() ~= "Same title" then
      fail("after the delete: " .. ctxls.title() .. "\n" .. text(alpha))
    end
    -- The next question goes to alpha.
    ask(ctxls, "after the delete", "after answer")
    if not has(alpha, "after the delete") then
      fail("the question after the delete went elsewhere:\n" .. text(alpha))
    end
    -- How long ago, from 2026-11-20 12:00 UTC.
    local noon = 1795176000
    for iso, want_ago in pairs({
      ["2026-11-20T11:59:30Z"] = "just now",
      ["2026-11-20T11:15:00.123456Z"] = "45 min ago",
      ["2026-11-20T10:00:00Z"] = "2 h ago",
      ["2026-11-20T11:00:00+01:00"] = "2 h ago",
      ["2026-11-19T09:00:00Z"] = "yesterday",
      ["2026-11-16T12:00:00Z"] = "4 days ago",
      ["2026-10-01T08:00:00Z"] = "2026-10-01",
    }) do
      if ctxls.ago(iso, noon) ~= want_ago then
        fail(string.format("ago(%s) = %q, want %q", iso, ctxls.ago(iso, noon), want_ago))
      end
    end
  elseif phase == "firstview" then
    -- The cursor rests on line 4 before any session exists: the first
    -- question, which makes the session, carries that view. :CtxlsAdd
    -- while it streams adds to that session (it waits for it); the chat
    -- buffer is then named after it, and it is the current session.
    vim.api.nvim_win_set_cursor(0, { 4, 0 })
    vim.cmd("doautocmd CursorHold")
    vim.wait(500) -- the daemon records a view that rested view_idle_ms
    vim.cmd("CtxlsAsk what is on my line?")
    wait("the first words", function()
      local b = chat_bufs()[1]
      return b ~= nil and has(b, "a ")
    end)
    vim.cmd("CtxlsAdd")
    local buf
    wait("the answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "a println") and not ctxls.busy()
    end)
    local sessions = call("session_list", { limit = 10 }).sessions
    if #sessions ~= 1 then
      fail(#sessions .. " sessions, want 1: " .. vim.inspect(sessions))
    end
    local id = sessions[1].id
    wait("the chat named after the session", function()
      return #chat_bufs() == 1 and vim.api.nvim_buf_get_name(buf) == "ctxls://chat/" .. id:sub(1, 6)
        and vim.api.nvim_buf_get_var(buf, "ctxls_session") == id
    end)
    -- Headed by the session's title (its first question's, then the model's).
    local head = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
    if head ~= "# what is on my line?" and head ~= "# View" then
      fail("the chat's title: " .. head)
    end
    local files
    wait("the file added", function()
      files = ((call("context_get", { sessionId = id, setName = "files" }) or {}).context or {}).files or {}
      return vim.tbl_contains(files, file)
    end)
    -- The next question goes to the same session and chat.
    ask(ctxls, "and then?", "then nothing")
    if #chat_bufs() ~= 1 or #call("session_list", { limit = 10 }).sessions ~= 1 or not has(buf, "then nothing") then
      fail("the second question went elsewhere:\n" .. text(buf))
    end
  elseif phase == "images" then
    -- :CtxlsAttach adds an image file to the next question: shown in the
    -- compose window's status line and the :CtxlsAsk prompt, taken back
    -- with !, refused when it is not an image or too large; sent with the
    -- question, shown in the chat as its name, opened with Enter and gf.
    local dir = os.getenv("CTXLS_IMAGES_DIR")
    local opened = {}
    ctxls.config.open_image = function(path)
      table.insert(opened, path)
    end
    local told = h.said
    vim.cmd("CtxlsAttach " .. vim.fn.fnameescape(dir .. "/notes.png"))
    if not told("notes.png is not a PNG, JPEG, GIF or WebP image") then
      fail("a text file named .png was not refused")
    end
    vim.cmd("CtxlsAttach " .. vim.fn.fnameescape(dir .. "/big.png"))
    if not told("big.png is 5,242,881 bytes; an image may be at most 5 MiB (5,242,880 bytes)") then
      fail("an image over 5 MiB was not refused")
    end
    if #ctxls.attached() ~= 0 then
      fail("refused images were attached: " .. vim.inspect(ctxls.attached()))
    end
    -- File names complete.
    local completed = vim.fn.getcompletion("CtxlsAttach " .. dir .. "/sh", "cmdline")
    if not vim.tbl_contains(completed, dir .. "/shot.png") then
      fail("the file name does not complete: " .. vim.inspect(completed))
    end
    vim.cmd("CtxlsAttach " .. vim.fn.fnameescape(dir .. "/shot.png"))
    vim.cmd("CtxlsAttach " .. vim.fn.fnameescape(dir .. "/photo.jpg"))
    local src = vim.api.nvim_get_current_win()
    vim.cmd("CtxlsChat")
    local compose_win = vim.api.nvim_get_current_win()
    local function status()
      local stl = vim.api.nvim_win_get_option(compose_win, "statusline")
      return vim.api.nvim_eval_statusline(stl, { winid = compose_win, maxwidth = 400, fillchar = " " }).str
    end
    if not status():find("with main.go · with images: shot.png, photo.jpg", 1, true) then
      fail("the compose window's status line: " .. status())
    end
    vim.cmd("CtxlsAttach! photo.jpg")
    if not status():find("with main.go · with image: shot.png", 1, true) then
      fail("the status line after :CtxlsAttach! photo.jpg: " .. status())
    end
    -- In a narrow window the keys are cut, not what goes.
    local stl = vim.api.nvim_win_get_option(compose_win, "statusline")
    local narrow = vim.api.nvim_eval_statusline(stl, { winid = compose_win, maxwidth = 50, fillchar = " " }).str
    if not vim.endswith(vim.trim(narrow), "with main.go · with image: shot.png") or not vim.startswith(narrow, " ctxls · ") then
      fail("the status line of a narrow compose window: " .. narrow)
    end
    vim.cmd("stopinsert")
    vim.cmd("close")
    vim.api.nvim_set_current_win(src)
    -- :CtxlsAsk without a question asks for it, saying what goes.
    local prompt
    vim.ui.input = function(opts, on_confirm)
      prompt = opts.prompt
      on_confirm("what is in the picture?")
    end
    vim.cmd("CtxlsAsk")
    if prompt ~= "Ask ctxls (with main.go, with image: shot.png): " then
      fail("the prompt: " .. tostring(prompt))
    end
    local buf
    wait("the answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "a red square") and not ctxls.busy()
    end)
    if #ctxls.attached() ~= 0 then
      fail("the image stays attached after the question: " .. vim.inspect(ctxls.attached()))
    end
    if not has(buf, "## You\n\n_with main.go_\n\nwhat is in the picture?\n\n_image: shot.png_\n\n## ctxls") then
      fail("the question's image in the chat:\n" .. text(buf))
    end
    -- Enter on the image's line opens it; gf too; elsewhere Enter is Enter.
    local chat_win = vim.fn.bufwinid(buf)
    vim.api.nvim_set_current_win(chat_win)
    local row = vim.fn.search("^_image: shot.png_$", "nw")
    if not underlined(buf, row) then
      fail("the image's line is not underlined")
    end
    vim.api.nvim_win_set_cursor(chat_win, { row, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    vim.api.nvim_feedkeys("gf", "x", false)
    wait("the image opened", function()
      return #opened == 2
    end)
    if opened[1] ~= dir .. "/shot.png" or opened[2] ~= dir .. "/shot.png" then
      fail("opened: " .. vim.inspect(opened))
    end
    -- Ten at most: the eleventh is refused.
    local copies = vim.fn.tempname()
    vim.fn.mkdir(copies, "p")
    local f = assert(io.open(dir .. "/shot.png", "rb"))
    local png = f:read("*a")
    f:close()
    for i = 1, 11 do
      local out = assert(io.open(string.format("%s/s%d.png", copies, i), "wb"))
      out:write(png)
      out:close()
      vim.cmd(string.format("CtxlsAttach %s/s%d.png", copies, i))
    end
    if #ctxls.attached() ~= 10 or not told("a question may carry 10 images") then
      fail("the eleventh image: " .. vim.inspect(ctxls.attached()))
    end
    vim.cmd("CtxlsAttach!")
    if #ctxls.attached() ~= 0 then
      fail(":CtxlsAttach! left " .. vim.inspect(ctxls.attached()))
    end
    -- An image the daemon refuses (a PNG's first bytes, then none of a
    -- PNG's): the question is not asked, and the image stays attached.
    vim.cmd("CtxlsAttach " .. vim.fn.fnameescape(dir .. "/broken.png"))
    vim.cmd("CtxlsAsk is this broken?")
    wait("the refusal", function()
      return told("not a png image") and not ctxls.busy()
    end)
    if not vim.deep_equal(ctxls.attached(), { "broken.png" }) then
      fail("after the refusal the images attached are " .. vim.inspect(ctxls.attached()))
    end
    vim.cmd("CtxlsAttach! broken.png")
    -- :CtxlsRetry asks the question again with its image (its line in
    -- the stored question), shown as before.
    vim.cmd("CtxlsRetry")
    wait("the retried answer", function()
      return has(buf, "still a red square") and not ctxls.busy()
    end)
    if has(buf, "[image: ") or count(buf, "_image: ") ~= 1 or not has(buf, "what is in the picture?\n\n_image: ") then
      fail("the retried question's image in the chat:\n" .. text(buf))
    end
    -- The next question goes without an image.
    ask(ctxls, "and now?", "no image")
    put_shared(dir)
  elseif phase == "images-reload" then
    -- In a new Neovim the resumed chat shows the stored image by name; Enter
    -- opens its copy in the session folder's sources/.
    local dir = get_shared()
    local opened = {}
    ctxls.config.open_image = function(path)
      table.insert(opened, path)
    end
    local buf = h.resume_first("no image")
    if has(buf, "[image: ") then
      fail("the stored image line is shown raw:\n" .. text(buf))
    end
    local chat_win = vim.fn.bufwinid(buf)
    vim.api.nvim_set_current_win(chat_win)
    local row = vim.fn.search("^_image: image-.*\\.png_$", "nw")
    if row == 0 or not has(buf, "what is in the picture?\n\n" .. vim.fn.getline(row) .. "\n\n## ctxls") then
      fail("the stored question's image in the chat:\n" .. text(buf))
    end
    if not underlined(buf, row) then
      fail("the stored image's line is not underlined")
    end
    vim.api.nvim_win_set_cursor(chat_win, { row, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    wait("the image opened", function()
      return #opened == 1
    end)
    local function bytes(path)
      local f = assert(io.open(path, "rb"))
      local s = f:read("*a")
      f:close()
      return s
    end
    local name = vim.fn.getline(row):match("^_image: (.*)_$")
    local folder = call("session_show", { sessionId = vim.api.nvim_buf_get_var(buf, "ctxls_session") }).session.folder
    if opened[1] ~= folder .. "/sources/" .. name or bytes(opened[1]) ~= bytes(dir .. "/shot.png") then
      fail("opened " .. vim.inspect(opened) .. ", want the copy of shot.png in " .. folder .. "/sources")
    end
  elseif phase == "restart" then
    -- The daemon dies between two questions: the next :CtxlsAsk starts
    -- another and asks in the same session, in the same chat.
    local buf = ask(ctxls, "before the crash", "first answer")
    local id = vim.api.nvim_buf_get_var(buf, "ctxls_session")
    local pid = assert(h.daemon_pid(), "the daemon's process")
    vim.loop.kill(pid, 9)
    wait("the daemon gone", function()
      return ctxls.client() == nil
    end)
    ask(ctxls, "after the crash", "second answer")
    local now = h.daemon_pid()
    if #chat_bufs() ~= 1 or vim.api.nvim_buf_get_var(buf, "ctxls_session") ~= id or now == nil or now == pid then
      fail("after the daemon died: " .. #chat_bufs() .. " chats\n" .. text(buf))
    end
    if count(buf, "_with main.go_\n\nbefore the crash") ~= 1 or count(buf, "## You") ~= 2 or not has(buf, "second answer") then
      fail("the chat after the daemon died:\n" .. text(buf))
    end
    local stored = {}
    for _, m in ipairs(call("session_show", { sessionId = id }).messages) do
      table.insert(stored, m.role .. ": " .. m.content)
    end
    if #stored ~= 4 or not stored[3]:find("after the crash", 1, true) then
      fail("the session after the daemon died: " .. vim.inspect(stored))
    end
  elseif phase == "export" then
    -- :CtxlsExport says where it wrote the session (its folder, in the
    -- data folder) and, given a file, writes it there: an existing one only
    -- with !. With no session yet it says what to do.
    local said = h.said
    vim.cmd("CtxlsExport")
    if not said("no current session to export: ask something first, or pick one with :CtxlsSessions") then
      fail(":CtxlsExport before any session")
    end
    local buf = ask(ctxls, "what to export?", "exported answer")
    -- (The session's folder is renamed when the model's title comes.)
    wait("the model's title", function()
      return vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "# Export"
    end)
    local folder = call("session_show", { sessionId = vim.api.nvim_buf_get_var(buf, "ctxls_session") }).session.folder
    if not vim.startswith(folder, os.getenv("CTXLS_DATA_DIR") .. "/sessions/") then
      fail("the session's folder: " .. folder)
    end
    local function read(path)
      local f = io.open(path, "rb")
      if not f then
        return nil
      end
      local s = f:read("*a")
      f:close()
      return s
    end
    vim.cmd("CtxlsExport")
    local where = folder .. "/export.md"
    wait("where the export went", function()
      return said("exported the session to " .. where .. " (:CtxlsExport {file} writes it where you say)")
    end)
    local exported = read(where)
    if not exported or not exported:find("what to export?", 1, true) or not exported:find("exported answer", 1, true) then
      fail("the export in the session folder:\n" .. tostring(exported))
    end
    -- Given a file (relative to the working directory), written there.
    vim.cmd("CtxlsExport notes/../chat.md")
    local to = vim.fn.getcwd() .. "/chat.md"
    wait("the export written where asked", function()
      return said("exported the session to " .. to)
    end)
    if read(to) ~= exported then
      fail("the export given a file:\n" .. tostring(read(to)))
    end
    -- An existing file is kept unless !.
    local f = assert(io.open(to, "w"))
    f:write("mine\n")
    f:close()
    vim.cmd("CtxlsExport chat.md")
    if not said(to .. " exists: :CtxlsExport! chat.md overwrites it") or read(to) ~= "mine\n" then
      fail("an existing file: " .. tostring(read(to)))
    end
    vim.cmd("CtxlsExport! chat.md")
    wait("the file overwritten", function()
      return read(to) == exported
    end)
    -- File names complete.
    if not vim.tbl_contains(vim.fn.getcompletion("CtxlsExport cha", "cmdline"), "chat.md") then
      fail("the file name does not complete")
    end
  elseif phase == "preview" then
    -- :CtxlsPreview shows what :CtxlsAsk would send: the file in front of
    -- you, unsaved text included, with a range its lines; ! leaves it out.
    vim.api.nvim_buf_set_lines(0, 0, 0, false, { "// UNSAVED PREVIEW LINE" })
    local function preview(cmd)
      local before = vim.api.nvim_get_current_buf()
      vim.cmd(cmd)
      local shown
      wait("the preview of " .. cmd, function()
        local b = vim.api.nvim_get_current_buf()
        if b ~= before and vim.api.nvim_buf_get_name(b):find("ctxls://preview/", 1, true) then
          shown = text(b)
        end
        return shown ~= nil
      end)
      vim.cmd("close")
      return shown
    end
    local whole = preview("CtxlsPreview what is this?")
    if not whole:find("// UNSAVED PREVIEW LINE", 1, true) or not whole:find("main.go (unsaved editor text)", 1, true) then
      fail("the preview lacks the file in front of you:\n" .. whole)
    end
    local lines = preview("4,5CtxlsPreview and these?")
    if not lines:find("(the user selected lines 4–5)", 1, true) then
      fail("the preview lacks the range:\n" .. lines)
    end
    local none = preview("CtxlsPreview! without it")
    if none:find("// UNSAVED PREVIEW LINE", 1, true) then
      fail("the preview with ! holds the file:\n" .. none)
    end
    -- Prompted, the prompt says what goes.
    local prompt
    vim.ui.input = function(opts, on_confirm)
      prompt = opts.prompt
      on_confirm("prompted")
    end
    preview("CtxlsPreview")
    if prompt ~= "Preview the prompt for (with main.go): " then
      fail("the prompt: " .. tostring(prompt))
    end
  else
    fail("no such phase")
  end
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
