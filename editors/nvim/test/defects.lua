-- Headless regression tests of the plugin's defects, run by nvim_test.go
-- (TestNeovimDefects), one phase per Neovim process:
--   nvim --headless --clean -c 'set rtp+=.' -c 'luafile test/defects.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE, OPENAI_BASE_URL,
-- CTXLS_TEST_PHASE, CTXLS_LOG_FILE. Exits 0 on success, 1 with a message on
-- stderr otherwise.
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(phase)
local messages, fail, wait, text, has, call, chat_bufs = h.messages, h.fail, h.wait, h.text, h.has, h.call, h.chat_bufs

-- rest_on rests the cursor on line (CursorHold) and waits until the daemon
-- recorded the view (the applet set); it returns the set.
local function rest_on(ctxls, line)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.cmd("doautocmd CursorHold")
  local applet
  wait("the applet", function()
    ctxls.command(require("ctxls.protocol").commands.context_get, { setName = "applet" }, function(r)
      applet = r.context.applet
    end)
    return applet ~= nil and vim.tbl_contains(applet, "line=" .. line)
  end)
  return applet
end

local ok, err = pcall(function()
  vim.cmd("runtime plugin/ctxls.lua")
  local ctxls = require("ctxls")
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  ctxls.setup({
    cmd = phase == "nomissing" and { "ctxls-not-installed-here", "serve" }
      or { phase == "gobin" and "ctxls-in-gobin" or os.getenv("CTXLS_BIN"), "serve", "--data-dir", os.getenv("CTXLS_DATA_DIR") },
    provider = { baseURL = os.getenv("OPENAI_BASE_URL"), model = "test-model" },
    debounce = 0,
    log_file = os.getenv("CTXLS_LOG_FILE"),
    view_idle_ms = 100,
    mcp_servers = phase == "mcpwarn" and { bad = { comand = "x" } } or nil,
  })
  local file = os.getenv("CTXLS_TEST_FILE")
  vim.cmd("cd " .. vim.fn.fnameescape(vim.fn.fnamemodify(file, ":h"))) -- the workspace folder
  if phase ~= "nofile" then
    vim.cmd("edit " .. file)
  end
  if phase ~= "early" and phase ~= "nofile" and phase ~= "nomissing" then
    wait("the daemon", function()
      local c = ctxls.client()
      return c ~= nil and c.initialized
    end)
  end

  if phase == "nofile" then
    -- Neovim opened without a file: :CtxlsAsk starts the daemon itself, the
    -- answer streams into a chat buffer, and the session is listed.
    if ctxls.client() then
      fail("the daemon was running before any command: the phase tests nothing")
    end
    vim.cmd("CtxlsAsk asked without a file")
    local buf
    wait("the answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "no file needed") and not ctxls.busy()
    end)
    local sessions = call("session_list", { limit = 10 }).sessions
    if #sessions ~= 1 then
      fail(#sessions .. " sessions, want 1")
    end
    for _, m in ipairs(messages) do
      if m:find("not running", 1, true) then
        fail("a command failed: " .. m)
      end
    end
  elseif phase == "early" then
    -- :CtxlsAdd and :CtxlsAsk at once, right after start-up, before the
    -- daemon has answered initialize: one session is made, the file is in
    -- its context, the answer lands in its chat buffer, and nothing fails.
    local c = ctxls.client()
    if c == nil or c.initialized then
      fail("the client should be started and not yet initialized here (client: " .. tostring(c) .. ")")
    end
    vim.cmd("CtxlsAdd")
    vim.cmd("CtxlsAsk early question")
    local buf
    wait("the answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "early answer") and not ctxls.busy()
    end)
    if #chat_bufs() ~= 1 then
      fail(#chat_bufs() .. " chat buffers, want 1")
    end
    local sessions = call("session_list", { limit = 10 }).sessions
    local files = (call("context_get", { setName = "files" }).context or {}).files or {}
    if #sessions ~= 1 then
      fail(#sessions .. " sessions, want 1: " .. vim.inspect(sessions))
    end
    if not vim.tbl_contains(files, file) then
      fail("the added file is not in the session's context: " .. vim.inspect(files))
    end
    for _, m in ipairs(messages) do
      if m:find("not open", 1, true) or m:find("initialize", 1, true) then
        fail("a command failed: " .. m)
      end
    end
  elseif phase == "cancel" then
    -- 1. Cancel, then ask again: the answer comes (turn state cleared).
    vim.cmd("CtxlsAsk first question")
    local buf
    wait("the partial answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "partial ")
    end)
    if not ctxls.busy() or not ctxls.statusline():find("[thinking…]", 1, true) then
      fail("statusline while busy: " .. ctxls.statusline())
    end
    vim.cmd("CtxlsCancel")
    wait("the cancelled mark", function()
      return has(buf, "partial \n\n_cancelled_")
    end)
    wait("the turn to end", function()
      return not ctxls.busy()
    end)
    vim.cmd("CtxlsAsk second question")
    wait("the second answer", function()
      return has(buf, "second answer")
    end)
    for _, m in ipairs(messages) do
      if m:find("a turn is running", 1, true) then
        fail("the second ask was refused: " .. m)
      end
    end
  elseif phase == "stream" then
    -- 4 and 8. Asked through the prompt: "thinking…" first, then the
    -- deltas appear while the turn runs.
    vim.ui.input = function(_, on_confirm)
      on_confirm("prompted question")
    end
    vim.cmd("CtxlsAsk")
    local buf
    wait("thinking…", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "_thinking…_")
    end)
    wait("the first delta", function()
      return has(buf, "one ")
    end)
    if not ctxls.busy() or has(buf, "five") then
      fail("the answer did not stream: it appeared whole")
    end
    if has(buf, "_thinking…_") then
      fail("thinking… stays after the first words")
    end
    wait("the whole answer", function()
      return has(buf, "one two three four five") and not ctxls.busy()
    end)
    -- Answers wrap at word boundaries, with Markdown's emphasis marks
    -- hidden, in the chat window and in any window the user shows the chat
    -- buffer in.
    local function prose(win)
      return vim.api.nvim_win_get_option(win, "wrap") and vim.api.nvim_win_get_option(win, "linebreak")
        and vim.api.nvim_win_get_option(win, "conceallevel") == 2
    end
    local chat_win = vim.fn.bufwinid(buf)
    if chat_win == -1 or not prose(chat_win) then
      fail("the chat window does not wrap at word boundaries or shows Markdown's marks")
    end
    vim.cmd("new")
    vim.api.nvim_win_set_option(0, "linebreak", false)
    vim.cmd("buffer " .. buf)
    if not prose(0) then
      fail("the chat buffer shown in another window does not wrap at word boundaries or shows Markdown's marks")
    end
    vim.cmd("close")
    -- The title is the first line's until the model's arrives.
    if not ctxls.statusline():find("^ctxls: ") or ctxls.statusline():find("thinking", 1, true) then
      fail("statusline after the turn: " .. ctxls.statusline())
    end
  elseif phase == "notices" then
    -- 5 and 6. :CtxlsAdd from the chat window adds the last file; notices
    -- are one line, so no Press-ENTER prompt.
    vim.o.cmdheight = 1
    vim.cmd("CtxlsAsk hello")
    local buf
    wait("the answer", function()
      buf = chat_bufs()[1]
      return buf ~= nil and has(buf, "hi there") and not ctxls.busy()
    end)
    if vim.api.nvim_get_current_buf() ~= buf then
      vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    end
    vim.cmd("CtxlsAdd")
    local got
    wait("the context", function()
      ctxls.command(require("ctxls.protocol").commands.context_get, {}, function(r)
        got = r.context
      end)
      return got ~= nil and got.files ~= nil
    end)
    if got.files[1] ~= file then
      fail("added " .. vim.inspect(got.files) .. ", want " .. file)
    end
    wait("the notice", function()
      for _, m in ipairs(messages) do
        -- ("editor view, " before it once the view is recorded)
        if m:find("context changed:", 1, true) and m:find("files (1)", 1, true) then
          return true
        end
      end
      return false
    end)
    for _, m in ipairs(messages) do
      if m:find("\n", 1, true) then
        fail("a notice of several lines: " .. m)
      end
      if m:find("ctxls: ctxls:", 1, true) or m:find("LSP[ctxls]", 1, true) then
        fail("a doubled prefix: " .. m)
      end
    end
    if h.prompting() then
      fail("Neovim waits at a prompt")
    end
  elseif phase == "sessions" then
    -- 7. One chat buffer per session, each headed by its title.
    vim.cmd("CtxlsAsk question in A")
    wait("answer A", function()
      local b = chat_bufs()[1]
      return b ~= nil and has(b, "answer A") and not ctxls.busy()
    end)
    vim.cmd("CtxlsNew")
    wait("the new session's buffer", function()
      return #chat_bufs() == 2
    end)
    vim.cmd("CtxlsAsk question in B")
    wait("the answer in B", function()
      for _, b in ipairs(chat_bufs()) do
        if has(b, "question in B\n\n## ctxls\n\n") and not ctxls.busy() then
          return true
        end
      end
      return false
    end)
    for _, b in ipairs(chat_bufs()) do
      local t = text(b)
      if t:find("question in A", 1, true) and t:find("question in B", 1, true) then
        fail("one buffer mixes two sessions:\n" .. t)
      end
      if not t:find("^# ") then
        fail("no session header:\n" .. t)
      end
    end
  elseif phase == "resume" then
    -- 2 and 9. In a new Neovim: search finds session A by its text, the
    -- hit resumes it and its history is shown; :CtxlsShow renders it too.
    vim.ui.select = function(items, opts, on_choice)
      on_choice(items[1])
    end
    vim.cmd("CtxlsSearch question in A")
    local buf
    wait("the resumed history", function()
      buf = chat_bufs()[1]
      return buf ~= nil and h.has_question(buf, "question in A") and has(buf, "## ctxls\n\nanswer A")
    end)
    if has(buf, "question in B") then
      fail("the resumed buffer shows another session:\n" .. text(buf))
    end
    vim.cmd("CtxlsPreview what next?")
    local pv
    wait("the preview", function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_get_name(b):find("ctxls://preview/", 1, true) then
          pv = b
          return true
        end
      end
      return false
    end)
    if not has(pv, "# Model input for test-model") or not has(pv, "answer A") or not has(pv, "what next?") or vim.api.nvim_buf_get_option(pv, "modifiable") then
      fail("preview:\n" .. text(pv))
    end
    -- :CtxlsDelete asks first: "Keep" deletes nothing, "Delete" deletes.
    local answer = "Keep"
    vim.ui.select = function(items, opts, on_choice)
      if items[1] == "Delete" then
        on_choice(answer)
      else
        on_choice(items[1])
      end
    end
    local count = function()
      return #call("session_list", {}).sessions
    end
    local before = count()
    vim.cmd("CtxlsDelete")
    vim.wait(300)
    if count() ~= before then
      fail("deleted without confirmation")
    end
    answer = "Delete"
    vim.cmd("CtxlsDelete")
    wait("the delete", function()
      return count() == before - 1
    end)
  elseif phase == "view" then
    -- 9. The view is sent on BufEnter and CursorHold: the daemon captures
    -- it as the session's applet.
    local source = vim.api.nvim_get_current_win()
    vim.cmd("CtxlsAsk hello")
    wait("the answer", function()
      return not ctxls.busy() and #chat_bufs() == 1 and has(chat_bufs()[1], "hi")
    end)
    -- The cursor stayed in the source (the chat shows beside it).
    if vim.api.nvim_get_current_win() ~= source then
      fail("the cursor moved into the chat")
    end
    local applet = rest_on(ctxls, 3)
    if applet[1] ~= "editor" or applet[2] ~= "file=" .. file then
      fail("applet " .. vim.inspect(applet))
    end
  elseif phase == "activefile" then
    -- 10. Issue 24: the file in front of you goes with the question.
    local said = h.said
    local answered = function(s)
      return function()
        return not ctxls.busy() and #chat_bufs() == 1 and has(chat_bufs()[1], s)
      end
    end
    -- Two asks at once in a fresh editor (no session yet): the second is
    -- refused, and the first answer arrives whole.
    vim.cmd("CtxlsAsk quick one")
    vim.cmd("CtxlsAsk quick two")
    wait("the quick answer", answered("quick answer"))
    if not said("a turn is running") or has(chat_bufs()[1], "quick two") then
      fail("the second quick ask was not refused")
    end
    -- The current file, with an unsaved edit, goes with the question, and
    -- the chat says so; the cursor stays in it.
    local source = vim.api.nvim_get_current_win()
    vim.api.nvim_buf_set_lines(0, 0, 0, false, { "// UNSAVED ACTIVE LINE" })
    vim.cmd("CtxlsAsk what is this?")
    wait("the first answer", answered("first answer"))
    if not has(chat_bufs()[1], "_with main.go_") then
      fail("the chat does not say which file went")
    end
    if vim.api.nvim_get_current_win() ~= source then
      fail("the cursor moved into the chat")
    end
    -- A range: its lines go too.
    vim.cmd("3,4CtxlsAsk and these lines?")
    wait("the second answer", answered("second answer"))
    if not has(chat_bufs()[1], "_with main.go:3-4_") then
      fail("the chat does not say which lines went")
    end
    -- :CtxlsAsk! leaves the file out; so does send_active_file = false.
    vim.cmd("CtxlsAsk! without the file")
    wait("the third answer", answered("third answer"))
    ctxls.config.send_active_file = false
    vim.cmd("CtxlsAsk no file by default")
    wait("the fourth answer", answered("fourth answer"))
    ctxls.config.send_active_file = true
    -- The editor view's capture is not told; a change the user makes is.
    local before = #messages
    rest_on(ctxls, 4)
    vim.wait(300)
    for i = before + 1, #messages do
      if messages[i]:find("context changed", 1, true) then
        fail("the editor view's capture was told: " .. messages[i])
      end
    end
    vim.cmd("CtxlsAdd")
    wait("the change told", function()
      return said("context changed: editor view, files (1)")
    end)
  elseif phase == "nomissing" then
    -- 11. No ctxls where it looks: the message says it is not installed
    -- and where it looked, not that "the daemon is not running".
    -- The notice fits one line, :checkhealth ctxls first; the health
    -- check also says how to install it.
    vim.cmd("CtxlsAsk hello")
    wait("the message", function()
      for _, m in ipairs(messages) do
        if m:find("ctxls: ctxls is not installed (:checkhealth ctxls): ctxls-not-installed-here is neither on $PATH nor in ", 1, true) and m:find("~/go/bin", 1, true) then
          return true
        end
      end
      return false
    end)
    vim.cmd("checkhealth ctxls")
    local report = text(vim.api.nvim_get_current_buf())
    if not report:find("ctxls-not-installed-here is neither on $PATH nor in", 1, true) or not report:find("CGO_ENABLED=0 go install ./cmd/ctxls in a clone of ctxls (its README)", 1, true) then
      fail(":checkhealth ctxls:\n" .. report)
    end
  elseif phase == "gobin" then
    -- 12. Not on $PATH but in Go's install folder (~/go/bin, where go
    -- install puts it): found there, and asking works.
    if vim.fn.executable("ctxls-in-gobin") == 1 then
      fail("ctxls-in-gobin is on $PATH")
    end
    vim.cmd("CtxlsAsk found?")
    wait("the answer", function()
      return #chat_bufs() == 1 and has(chat_bufs()[1], "found in go/bin") and not ctxls.busy()
    end)
    local got = ctxls.client().config.cmd[1]
    if got ~= vim.fn.expand("~/go/bin/ctxls-in-gobin") then
      fail("the daemon ran as " .. got)
    end
    -- :checkhealth ctxls finds it there too.
    vim.cmd("checkhealth ctxls")
    local report = text(vim.api.nvim_get_current_buf())
    if not report:find("binary: " .. got, 1, true) then
      fail(":checkhealth ctxls:\n" .. report)
    end
  elseif phase == "nokey" then
    -- 9. With no provider, the chat says how to set one in Neovim's
    -- words (setup({ provider = … }), not the daemon's initializationOptions):
    -- the key (a command that prints it, or OPENAI_API_KEY), or another
    -- server's address and model; and the plugin's notice fits an
    -- 80-column command line (68 cells).
    vim.cmd("CtxlsAsk hello")
    wait("the message", function()
      return vim.tbl_contains(messages, "ctxls: no model provider yet: the chat says what to set") and #chat_bufs() == 1
        and has(chat_bufs()[1], '_error: no model provider yet_\n\nTo use OpenAI, give ctxls your key in `require("ctxls").setup()`, a command that prints it (or a function that returns it):\n\n```lua\nprovider = { api_key = "cmd:pass show openai" }\n```\n\nor set `OPENAI_API_KEY` before Neovim starts.')
        and not ctxls.busy()
    end)
    local t = table.concat(vim.api.nvim_buf_get_lines(chat_bufs()[1], 0, -1, false), "\n")
    if t:find("initializationOptions", 1, true)
      or not t:find('For another server (Ollama, llama.cpp, vLLM), its address and a model:\n\n```lua\nprovider = { baseURL = "http://127.0.0.1:11434/v1", model = "llama3.1" }\n```\n\n`:CtxlsSetup` shows what is set.', 1, true) then
      fail("the chat after asking with no provider:\n" .. t)
    end
    -- Said once: the daemon's message of it (window/showMessage) is not
    -- shown beside the plugin's (two messages push a Press ENTER).
    vim.wait(300)
    local said = vim.tbl_filter(function(m)
      return m:find("no model provider", 1, true) ~= nil
    end, messages)
    if #said ~= 1 then
      fail("the missing provider was said " .. #said .. " times")
    end
  elseif phase == "mcpwarn" then
    -- 10. A server of mcp_servers with a mistake: the warning is shown
    -- once (the daemon sends it as window/showMessage and in the turn's
    -- progress), and not again at the next question.
    local function said()
      return #vim.tbl_filter(function(m)
        return m:find("MCP configuration", 1, true) ~= nil
      end, messages)
    end
    vim.cmd("CtxlsAsk first?")
    wait("the first answer", function()
      return #chat_bufs() == 1 and has(chat_bufs()[1], "first answer") and not ctxls.busy()
    end)
    if said() ~= 1 then
      fail("the MCP configuration's warning was shown " .. said() .. " times")
    end
    if not h.said('ctxls: MCP configuration: settings: server "bad", field comand: unknown field') then
      fail("the warning does not say what is wrong")
    end
    vim.cmd("CtxlsAsk second?")
    wait("the second answer", function()
      return has(chat_bufs()[1], "second answer") and not ctxls.busy()
    end)
    if said() ~= 1 then
      fail("after the second question the MCP configuration's warning was shown " .. said() .. " times")
    end
  end
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
