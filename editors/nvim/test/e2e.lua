-- Headless end-to-end test, run by editors/nvim/nvim_test.go:
--   nvim --headless --clean -c 'set rtp+=editors/nvim' -c 'luafile editors/nvim/test/e2e.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE, OPENAI_BASE_URL,
-- CTXLS_TEST_PHASE ("ask", "resume", "tools" or "tools-resume"), and for
-- the tools phases CTXLS_MCP_SERVERS (the mcpServers JSON) and
-- CTXLS_TOOL_LINES (a file: the calls' lines the first shows, for the
-- second). Exits 0 on success, 1 with a message on stderr otherwise.
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(nil)
local messages, fail, wait, said, chat_text, press = h.messages, h.fail, h.wait, h.said, h.chat_text, h.press

local call_lines = h.call_lines

-- row_of is the 1-based line number of the chat's line that starts with
-- prefix, or nil.
local function row_of(buf, prefix)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:sub(1, #prefix) == prefix then
      return i
    end
  end
end

-- answer_questions answers the daemon's questions as they come up in the
-- chat, as a person does: each entry of keys is pressed in the chat
-- window once its question is shown (a list: pressed one after another,
-- with the chat's key line after each but the last kept in confirming;
-- {cmd = …}: that command run in the window the user is in; false: none,
-- the question is left to time out). It returns the
-- questions asked (their messages), in order.
local function answer_questions(ctxls, keys)
  local asked, last, confirming = {}, 0, {}
  local timer = vim.loop.new_timer()
  timer:start(20, 20, vim.schedule_wrap(function()
    local open, n = ctxls.questions()
    if n == last or #open == 0 then
      return
    end
    last = n
    table.insert(asked, open[#open].message)
    local k = table.remove(keys, 1)
    if not k then
      return
    end
    if type(k) == "table" and k.cmd then
      vim.cmd(k.cmd) -- from where the user is, not the chat
      return
    end
    local chat = vim.fn.bufnr("ctxls://chat/")
    local from = vim.api.nvim_get_current_win()
    vim.api.nvim_set_current_win(vim.fn.bufwinid(chat))
    for i, key in ipairs(type(k) == "table" and k or { k }) do
      h.press(key)
      if i < #k and type(k) == "table" then
        local lines = vim.api.nvim_buf_get_lines(chat, 0, -1, false)
        table.insert(confirming, lines[#lines - 1])
      end
    end
    vim.api.nvim_set_current_win(from)
  end))
  return asked, confirming
end

local ok, err = pcall(function()
  local servers = os.getenv("CTXLS_MCP_SERVERS")
  local ctxls = h.start({
    debounce = 0,
    mcp_servers = servers and vim.json.decode(servers) or nil,
    tool_permission_timeout_seconds = servers and 2 or nil,
  })
  local file = os.getenv("CTXLS_TEST_FILE")
  vim.cmd("edit " .. file)
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)

  if phase == "tools" then
    -- The model calls tools: each call is a line in the chat, updated in
    -- place; the user answers the permission question in the chat, with
    -- its keys (always: A twice), or with :CtxlsAnswer from the file.
    local asked, confirming = answer_questions(ctxls, { "a", "d", { cmd = "CtxlsAnswer allow" }, false, { "A", "A" }, "a", false })
    vim.cmd("CtxlsNew")
    local chat
    wait("the chat buffer", function()
      chat = vim.fn.bufnr("ctxls://chat/")
      return chat >= 0
    end)
    local win = vim.fn.bufwinid(chat)
    -- Every change to a call's line, with how many questions were asked then.
    local log = {}
    vim.api.nvim_buf_attach(chat, false, {
      on_lines = function(_, b, _, first, _, new_last)
        for i, l in ipairs(vim.api.nvim_buf_get_lines(b, first, new_last, false)) do
          if l:find(" — ", 1, true) then
            table.insert(log, { row = first + i, text = l, asked = #asked })
          end
        end
      end,
    })
    local function turn(question, last_words)
      vim.cmd("CtxlsAsk " .. question)
      wait("the answer to " .. question, function()
        return chat_text():find(last_words, 1, true) ~= nil and not ctxls.busy()
      end)
    end

    -- 1. ctxls's own write_file runs unasked; echo is asked and allowed once.
    turn("write the notes and echo hi", "Echoed.")
    if asked[1] ~= 'ctxls: the model wants to call t · echo (read-only) with {"text":"hi"}. Allow it?' then
      fail("the question: " .. vim.inspect(asked))
    end
    local echo = '▾ t · echo `{"text":"hi"}` — done'
    local write = '▾ write_file `{"path":"results/notes.md","content":"hello"}` — done'
    local lnum = row_of(chat, echo)
    if not lnum or not row_of(chat, write) then
      fail("the calls' lines:\n" .. chat_text())
    end
    -- The echo line was shown waiting before the question was answered,
    -- then changed in place.
    local states = {}
    for _, e in ipairs(log) do
      if e.text:find("t · echo", 1, true) then
        if e.row ~= lnum then
          fail(string.format("the echo call's line moved from %d to %d:\n%s", e.row, lnum, chat_text()))
        end
        table.insert(states, e.text:match(" — (.*)$") .. "@" .. e.asked)
      end
    end
    if states[1] ~= "waiting for your permission@0" or states[#states] ~= "done@1" then
      fail("the echo line's states: " .. vim.inspect(states))
    end
    -- The question, answered, says so after the calls; the answer follows
    -- after a blank line.
    if not chat_text():find('```\n\n> _ctxls asked: the model wants to call t · echo (read-only) with {"text":"hi"}. Allow it? → allowed once_\n\nEchoed.', 1, true) then
      fail("the question and the answer after the calls:\n" .. chat_text())
    end
    -- In a narrow window the folded line's arguments are cut, not its
    -- status and length.
    -- (Wide enough for the whole line otherwise.)
    vim.o.columns = 200
    vim.api.nvim_set_current_win(win)
    local wide = vim.api.nvim_win_get_width(win)
    vim.cmd("leftabove vnew")
    local beside = vim.api.nvim_get_current_win()
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_width(win, 36)
    local narrow = vim.fn.foldtextresult(lnum)
    local room = vim.api.nvim_win_get_width(win) - vim.fn.getwininfo(win)[1].textoff
    vim.api.nvim_win_close(beside, true)
    vim.api.nvim_win_set_width(win, wide)
    if not narrow:find('^▸ t · echo `{.*…` — done  %[1 line%]$') or vim.fn.strdisplaywidth(narrow) > room then
      fail(string.format("the folded call in %d columns: %q", room, narrow))
    end
    local out, folded = h.expand(win, lnum)
    if table.concat(out, "\n") ~= "```\necho: hi\n```" or not folded:find('^▸ t · echo `{"text":"hi"}` — done  %[1 line%]') then
      fail("the echo call's output: " .. vim.inspect(out) .. " folded as " .. folded)
    end
    wait("the model's title", function()
      return vim.api.nvim_buf_get_lines(chat, 0, 1, false)[1] == "# Tool session"
    end)

    -- 2. add is denied, fail is allowed and fails.
    turn("add and fail", "One was refused.")
    if not (asked[2] or ""):find('t · add (may change or delete things) with {"a":1,"b":2}. Allow it?', 1, true) then
      fail("the second question: " .. vim.inspect(asked))
    end
    lnum = row_of(chat, '▾ t · add `{"a":1,"b":2}` — declined')
    -- (fail was allowed with :CtxlsAnswer allow, typed in the file's window.)
    if not chat_text():find("t · fail[^\n]*Allow it%? → allowed once_") then
      fail("the question answered with :CtxlsAnswer:\n" .. chat_text())
    end
    if not lnum or not row_of(chat, "▾ t · fail — failed") then
      fail("the declined and failed calls' lines:\n" .. chat_text())
    end
    out = h.expand(win, lnum)
    if not (out[2] or ""):find("^The user declined this call of t · add") then
      fail("the declined call's output: " .. vim.inspect(out))
    end

    -- 3. No answer: the question closes when the daemon stops waiting (2 s),
    -- and the call is declined.
    local t0 = vim.loop.now()
    turn("echo late", "No answer came.")
    if #asked ~= 4 or #ctxls.questions() ~= 0 or h.prompting() then
      fail("the unanswered question is still open: " .. vim.inspect(asked))
    end
    if not chat_text():find('with {"text":"late"}. Allow it? → no answer in time_', 1, true) or chat_text():find("[a] allow once", 1, true) then
      fail("the unanswered question's line:\n" .. chat_text())
    end
    if vim.loop.now() - t0 < 1900 then
      fail("the unanswered question ended before the timeout")
    end
    if not said("ctxls: no answer within 2 s: the question was not answered in time; the call did not run") or said("declined") then
      fail("the timeout was not said as it is: " .. vim.inspect(messages))
    end
    if not row_of(chat, '▾ t · echo `{"text":"late"}` — declined') then
      fail("the unanswered call's line:\n" .. chat_text())
    end

    -- 4. Always in this session: the second call is not asked. A slow
    -- call shows its server's progress while it runs.
    turn("echo twice", "Twice.")
    if #asked ~= 6 or not row_of(chat, '▾ t · echo `{"text":"b"}` — done') or not asked[6]:find("t · slow", 1, true) then
      fail("always in this session: " .. vim.inspect(asked) .. "\n" .. chat_text())
    end
    -- Always took A twice: the first asked to confirm.
    if not (confirming[1] or ""):find("^> press A again to confirm: always in this session") or not chat_text():find('{"text":"a"}. Allow it? → always allowed in this session_', 1, true) then
      fail("always's confirmation: " .. vim.inspect(confirming) .. "\n" .. chat_text())
    end
    local progress = false
    for _, e in ipairs(log) do
      progress = progress or e.text == '• t · slow `{"steps":3,"ms":150}` — running: step 2 (2/3)'
    end
    if not progress or not row_of(chat, '▾ t · slow `{"steps":3,"ms":150}` — done') then
      fail("the slow call's progress: " .. vim.inspect(log))
    end
    -- 5. The turn cancelled while its call waits for permission: the
    -- call reads "cancelled" (not "declined": nobody said no). (add: echo
    -- is allowed always by now.)
    vim.cmd("CtxlsAsk add never")
    wait("the question of the call to cancel", function()
      return #asked == 7 and #ctxls.questions() == 1
    end)
    vim.cmd("CtxlsCancel")
    wait("the cancelled call's line", function()
      return row_of(chat, '▾ t · add `{"a":5,"b":6}` — cancelled') ~= nil and not ctxls.busy()
    end)
    -- The calls' lines, for the next phase to compare with the history.
    vim.fn.writefile(call_lines(chat), os.getenv("CTXLS_TOOL_LINES"))
  elseif phase == "tools-resume" then
    -- In a new Neovim, the session's history shows the same lines.
    vim.ui.select = function(items, _, on_choice)
      on_choice(items[1])
    end
    vim.cmd("CtxlsSessions")
    local chat
    wait("the history", function()
      chat = vim.fn.bufnr("ctxls://chat/")
      return chat >= 0 and chat_text():find("Twice.", 1, true) ~= nil
    end)
    -- (write_file's stored arguments leave its content out: its line differs.)
    local want = vim.tbl_filter(function(l)
      return l:find(" · ", 1, true) ~= nil
    end, vim.fn.readfile(os.getenv("CTXLS_TOOL_LINES")))
    local got = vim.tbl_filter(function(l)
      return l:find(" · ", 1, true) ~= nil
    end, call_lines(chat))
    if #want ~= 8 or not vim.deep_equal(got, want) or not row_of(chat, '▾ t · add `{"a":5,"b":6}` — cancelled') then
      fail("the history's call lines:\n" .. table.concat(got, "\n") .. "\nwant\n" .. table.concat(want, "\n") .. "\n" .. chat_text())
    end
    -- One answer heading per turn, and its output unfolds.
    local t = chat_text()
    local question = t:find('## You\n\nwrite the notes and echo hi\n\n## ctxls\n\n▾ write_file', 1, true)
      or t:find('## You\n\n_with [^\n]+_\n\nwrite the notes and echo hi\n\n## ctxls\n\n▾ write_file')
    if not question or not t:find("```\n\nEchoed.", 1, true) then
      fail("the history:\n" .. t)
    end
    local out = h.expand(vim.fn.bufwinid(chat), row_of(chat, '▾ t · echo `{"text":"hi"}` — done'))
    if table.concat(out, "\n") ~= "```\necho: hi\n```" then
      fail("the stored echo output: " .. vim.inspect(out))
    end
  elseif phase == "ask" then
    -- Change the buffer without saving.
    vim.api.nvim_buf_set_lines(0, 0, 0, false, { "// UNSAVED LINE FROM NEOVIM" })
    vim.cmd("CtxlsAdd")
    wait("context changed", function()
      return said("context changed: files (1)")
    end)
    vim.cmd("CtxlsAsk what does this file do?")
    local chat
    wait("the streamed answer", function()
      chat = vim.fn.bufnr("ctxls://chat/")
      if chat < 0 then
        return false
      end
      local text = table.concat(vim.api.nvim_buf_get_lines(chat, 0, -1, false), "\n")
      return text:find("It prints hello.", 1, true) ~= nil
    end)
    if vim.api.nvim_buf_get_option(chat, "filetype") ~= "markdown" then
      fail("chat buffer filetype")
    end
    wait("the turn to end", function()
      return require("ctxls").title() ~= ""
    end)
    -- The model's title (asked once, after the first answer) before the
    -- daemon goes: the next phase's requests are then its turn and its
    -- summary, in that order.
    wait("the model's title", function()
      return vim.api.nvim_buf_get_lines(chat, 0, 1, false)[1] == "# Hello program"
    end)
  else
    -- Resume the session made by the first run, from the picker.
    vim.ui.select = function(items, _, on_choice)
      on_choice(items[1])
    end
    -- The daemon answers late (as when busy): the resume's answer after
    -- its "resumed context" notice, and the history after the next
    -- question is asked. The question waits for both: asked before, it
    -- made a new session (Neovim 0.12 in a CI run), and a history drawn
    -- during its turn wiped the turn's lines. Each is held until the
    -- answer streams, or 1 s.
    local command = ctxls.command
    local held = {}
    ctxls.command = function(id, arg, cb, on_err)
      if (id == "ctxls.session.resume" or id == "ctxls.session.show") and cb and not held[id] then
        held[id] = true
        return command(id, arg, function(r)
          local timer, since = vim.loop.new_timer(), vim.loop.now()
          timer:start(20, 20, vim.schedule_wrap(function()
            local buf = vim.fn.bufnr("ctxls://chat/")
            local streaming = buf >= 0 and h.has(buf, "Then it ")
            if timer:is_closing() or not (streaming or vim.loop.now() - since > 1000) then
              return
            end
            timer:close()
            cb(r)
          end))
        end, on_err)
      end
      return command(id, arg, cb, on_err)
    end
    vim.cmd("CtxlsSessions")
    wait("resume notification", function()
      return said("resumed context: files (1)")
    end)
    vim.cmd("CtxlsContext")
    wait("context buffer", function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
        if text:find("# ctxls session context", 1, true) then
          return text:find("  " .. file, 1, true) ~= nil
        end
      end
      return false
    end)

    -- A second turn, then :CtxlsCompact: the first turn is summarised for
    -- the model, both stay in the chat buffer, and a line marks where the
    -- model's view starts (after the first answer, before the second
    -- question).
    vim.cmd("CtxlsAsk and then?")
    local chat
    local function text()
      chat = vim.fn.bufnr("ctxls://chat/")
      return chat >= 0 and table.concat(vim.api.nvim_buf_get_lines(chat, 0, -1, false), "\n") or ""
    end
    wait("the second answer", function()
      return text():find("Then it exits.", 1, true) ~= nil
    end)
    wait("the second turn to end", function()
      return not require("ctxls").busy()
    end)
    vim.cmd("CtxlsCompact")
    wait("the compaction's notification", function()
      return said("the first question and its answer are summarised for the model; every message is kept")
    end)
    wait("the mark in the chat buffer", function()
      return text():find("_summarised for the model: the first question and its answer; all are kept here (Enter: the summary)_", 1, true) ~= nil
    end)
    local t = text()
    local first, mark, second = t:find("It prints hello.", 1, true), t:find("_summarised for the model", 1, true), t:find("and then?", 1, true)
    if not (first and mark and second and first < mark and mark < second and t:find("Then it exits.", 1, true)) then
      fail("the chat buffer after :CtxlsCompact:\n" .. t)
    end
    -- Enter on the mark shows the summary the model is given.
    local win = vim.fn.bufwinid(chat)
    vim.api.nvim_set_current_win(win)
    for i, l in ipairs(vim.api.nvim_buf_get_lines(chat, 0, -1, false)) do
      if l:find("^_summarised for the model") then
        vim.api.nvim_win_set_cursor(win, { i, 0 })
      end
    end
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    local summary
    wait("the summary", function()
      summary = vim.fn.bufnr("ctxls://summary/")
      return summary >= 0 and vim.api.nvim_get_current_buf() == summary
    end)
    local st = table.concat(vim.api.nvim_buf_get_lines(summary, 0, -1, false), "\n")
    if st ~= "# The summary the model is given of the first question and its answer\n\n## Goal\n\nExplain main.go." then
      fail("the summary shown:\n" .. st)
    end
  end
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
