-- ctxls for Neovim: a thin client over the ctxls daemon's LSP protocol.
-- Works on Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).
local M = {}

-- The protocol's names, generated from package api (go test ./api -update).
local P = require("ctxls.protocol")
-- The model's tool calls in the chat.
local tools = require("ctxls.tools")
-- The daemon's questions (tool permission, workspace trust) in the chat.
local questions_ui = require("ctxls.questions")
-- The model's searches of the workspace: their results, the quickfix list.
local search = require("ctxls.search")
-- The model's edits: reviewed in a diff tab, applied to the buffers.
local review = require("ctxls.review")
local edits = require("ctxls.edits")
-- Images that go with a question (:CtxlsAttach) and their lines in the chat.
local images = require("ctxls.images")
-- The editor's diagnostics for the model's diagnostics tool.
local diagnostics = require("ctxls.diagnostics")
-- The questions sent, brought back in the compose window (Ctrl-P, Ctrl-N).
local history = require("ctxls.history")
-- @file mentions completed in the compose window.
local mentions = require("ctxls.mentions")
-- The provider's key from setup() (provider.api_key), for the daemon's
-- environment only.
local key = require("ctxls.key")
-- What to say when no provider is usable, and :CtxlsSetup.
local firstrun = require("ctxls.firstrun")

M.config = {
  cmd = { "ctxls", "serve" },
  -- { baseURL, model, api, apiKeyEnv, titleModel, contextWindow,
  -- maxOutputTokens, api_key }. api_key: the provider's key, best
  -- "cmd:pass show openai" (a command that prints it) or a function that
  -- returns it; looked up when the daemon starts and given to it alone, in
  -- its environment (:help ctxls-key). nil: the daemon reads
  -- OPENAI_API_KEY (or apiKeyEnv) from Neovim's environment.
  provider = nil,
  data_dir = nil,
  -- When a turn summarises the session's earlier turns: the input's share
  -- of the window in percent (80, or "80%"), or "off"; nil: the daemon's
  -- default (80). :CtxlsCompact summarises now.
  compact_at = nil,
  debounce = 50, -- ms between didChange notifications
  -- The daemon's log (its stderr would be shown as [ERROR] lines in the LSP
  -- log): --log-file is added to cmd unless cmd names one. false: no file.
  log_file = vim.fn.stdpath("cache") .. "/ctxls.log",
  -- MCP servers whose tools the model may call, in Claude Code's .mcp.json
  -- format: { NAME = { command = "...", args = { ... }, env = { ... } } }.
  -- Each call is asked first (:help ctxls-tools).
  mcp_servers = nil,
  allow_read_only_tools = nil, -- true: tools their server says change nothing run unasked
  tool_permission_timeout_seconds = nil, -- no answer within it denies (nil: 120)
  -- :CtxlsAsk sends the file in front of you (its current text, unsaved
  -- edits included) with the question, and the lines of a range
  -- (:'<,'>CtxlsAsk). false: only the session's relevant files go
  -- (:CtxlsAsk! leaves the file out once).
  send_active_file = true,
  -- true: :CtxlsAsk moves the cursor into the chat window.
  focus_chat = false,
  -- How Enter (or gf) on an image's line in the chat opens the image:
  -- function(path); nil: the system's viewer (xdg-open, open), else a buffer.
  open_image = nil,
  -- The project's instructions files (AGENTS.md at the workspace's root and
  -- in the folders of the files a turn involves; else CLAUDE.md or
  -- .github/copilot-instructions.md) go to the model, named in the chat
  -- under its header. false: none go. setup() again changes it while the
  -- daemon runs, from the next turn.
  project_instructions = true,
}

-- state is the plugin's one connection:
--   client_id   the LSP client
--   current     the current session's id (nil before the first one)
--   titles      session id → title
--   bufs        session id → its chat buffer
--   turn        the running turn: {token, buf, session, request_id, thinking, done}
--   last_file   the last normal file buffer entered (for :CtxlsAdd from the chat)
--   last_win    the last window entered that shows a file (:CtxlsApplyBlock)
-- creating: the callbacks waiting for a session.new in flight (with_session).
-- told_context: session id → the context last told (applet left out).
-- asking: a :CtxlsAsk is on its way to becoming state.turn.
-- shown: session id → the signature of the stored messages its chat buffer
--   shows (see signature); questions: session id → how many questions it
--   shows; settling: session id → reads of a turn's end in flight (settle);
--   header: session id → what the chat's header line says (header_line).
-- instructions: session id → the project's instructions files its turns
--   give the model ({path, bytes, size, unsaved, cut}), named on the line
--   under the header (instructions_line); instructions_seq: session id →
--   the number of the last read of them asked, or of the turn that told
--   them (a slower read then comes too late to count).
-- images: the images attached for the next question (:CtxlsAttach), each
--   { name, path, url }; image_paths: chat buffer → image name → the file
--   an image shown as asked here was read from.
-- A turn that makes its session (the first question): see adopt below.
local adopt, unborn, learn

local state = { client_id = nil, current = nil, titles = {}, bufs = {}, turn = nil, seq = 0, last_file = nil, last_win = nil, creating = nil, told_context = {}, asking = false, shown = {}, questions = {}, settling = {}, showing = {}, header = {}, model_at = {}, images = {}, image_paths = {}, instructions = {}, instructions_seq = {}, instructions_asked = 0 }

-- builtin_notify: vim.notify is Neovim's own, which echoes on the command
-- line (not a plugin's popup). Neovim's own Lua is built into it: a
-- function of it tells its source as "@vim/_editor.lua" (0.7, 0.10) or
-- not at all, "?" (0.12 strips it); a plugin's tells the file's path.
local function builtin_notify()
  local info = debug.getinfo(vim.notify, "S")
  local source = info and info.source or ""
  return source:find("^@vim/") ~= nil or source == "?" or source == "=?"
end

local function notify(msg, level)
  -- One line: a multi-line message stops the user with Press ENTER.
  msg = "ctxls: " .. tostring(msg):gsub("%s*\n%s*", "; ")
  -- So does one wider than the command line (a provider's error with its
  -- URL): Neovim's own vim.notify gets it cut to fit ("…"); a turn's error
  -- is in its chat whole.
  local room = (vim.v.echospace or (vim.o.columns - 12)) - 1
  if builtin_notify() and room > 20 and vim.fn.strdisplaywidth(msg) > room then
    local n = vim.fn.strchars(msg)
    while n > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(msg, 0, n)) > room - 1 do
      n = n - 1
    end
    msg = vim.fn.strcharpart(msg, 0, n) .. "…"
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

-- error_kind is the kind of an error the daemon answered with (its
-- data.kind, one of P.error_kinds): the plugin decides on it, never on the
-- message, which is for people.
local function error_kind(err)
  return type(err) == "table" and type(err.data) == "table" and err.data.kind or nil
end

-- client:request changed from a function field to a method in 0.11.
-- No buffer is named: Neovim then first sends every buffer's didChange
-- it holds back (the debounce), so a question asked right after typing is
-- answered about the text typed. (Given 0, Neovim 0.7 looks for buffer 0's
-- changes, finds none, and sends the request ahead of them.)
local function request(client, method, params, handler)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

local function client_notify(client, method, params)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.client()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

-- command runs a ctxls command with one object argument; on_err (optional)
-- gets the error instead of the default notice.
function M.command(id, arg, cb, on_err)
  local client = M.ensure_client()
  if not client then
    notify(state.missing or "the daemon is not running", vim.log.levels.ERROR)
    return
  end
  if arg == nil or next(arg) == nil then
    arg = vim.empty_dict() -- an empty Lua table would be sent as []
  end
  request(client, "workspace/executeCommand", { command = id, arguments = { arg } }, function(err, result)
    if err then
      if on_err then
        on_err(err)
      else
        notify(id .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
      return
    end
    if cb then
      cb(result)
    end
  end)
end

-- Chat buffers: one per session ----------------------------------------------

local function redraw()
  pcall(vim.cmd, "redraw")
end

local function set_lines(buf, first, last, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
end

-- prose_window wraps win's lines at word boundaries, continued lines
-- indented like their first (list items, quotes), and hides Markdown's
-- emphasis marks (shown again on the cursor's line), as a chat reads.
local function prose_window(win)
  vim.api.nvim_win_set_option(win, "wrap", true)
  vim.api.nvim_win_set_option(win, "linebreak", true)
  vim.api.nvim_win_set_option(win, "breakindent", true)
  vim.api.nvim_win_set_option(win, "conceallevel", 2)
  tools.window(win)
end

-- thousands writes n with thousands separators: 12,345.
local function thousands(n)
  local s = tostring(math.floor(n or 0))
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

-- usage_text is a usage ({promptTokens, completionTokens, cachedTokens})
-- in words: "1,234 in (200 cached) · 56 out"; nil when the provider said
-- nothing.
local function usage_text(u)
  if type(u) ~= "table" or ((u.promptTokens or 0) == 0 and (u.completionTokens or 0) == 0) then
    return nil
  end
  local cached = (u.cachedTokens or 0) > 0 and string.format(" (%s cached)", thousands(u.cachedTokens)) or ""
  return string.format("%s in%s · %s out", thousands(u.promptTokens), cached, thousands(u.completionTokens))
end

-- add_usage adds usage b to a (nil: none yet) and returns the sum.
local function add_usage(a, b)
  if type(b) ~= "table" then
    return a
  end
  a = a or { promptTokens = 0, completionTokens = 0, cachedTokens = 0 }
  a.promptTokens = a.promptTokens + (b.promptTokens or 0)
  a.completionTokens = a.completionTokens + (b.completionTokens or 0)
  a.cachedTokens = a.cachedTokens + (b.cachedTokens or 0)
  return a
end

-- header_line is a chat buffer's second line: the model of the session's
-- turns and what its turns have cost. state.header[id]: chosen (the
-- session's own model, "" for the provider's), last (the model of the last
-- answer), usage (the session's).
local function header_line(id)
  local h = state.header[id] or {}
  local model = (h.chosen and h.chosen ~= "") and h.chosen or nil
  if not model then
    local configured = type(M.config.provider) == "table" and M.config.provider.model or nil
    model = configured or state.default_model or h.last
    model = model and (model .. " (default)") or "the provider's default"
  end
  local s = "_model: " .. model
  local u = usage_text(h.usage)
  if u then
    s = s .. " · this session: " .. u
  end
  return s .. "_"
end

-- workspace_path is path (absolute) relative to the workspace folder, the
-- daemon's root, when it is in it; else with ~ for the home folder.
local function workspace_path(path)
  local client = M.client()
  local root = client and client.config and client.config.root_dir
  if root and root ~= "" then
    root = root:gsub("/$", "")
    if path:sub(1, #root + 1) == root .. "/" then
      return path:sub(#root + 2)
    end
  end
  return vim.fn.fnamemodify(path, ":~")
end

-- instruction_marks is what an instructions file's name is followed by:
-- " (unsaved)" (the editor's text goes), " (cut)" (not all of it goes),
-- " (unsaved, cut)", or "".
local function instruction_marks(f)
  local marks = {}
  if f.unsaved then
    table.insert(marks, "unsaved")
  end
  if f.cut and f.cut ~= "" then
    table.insert(marks, "cut")
  end
  return #marks > 0 and (" (" .. table.concat(marks, ", ") .. ")") or ""
end

-- instructions_text names the project's instructions files of a turn:
-- "AGENTS.md, pkg/AGENTS.md (cut)"; nil when none.
local function instructions_text(files)
  if type(files) ~= "table" or #files == 0 then
    return nil
  end
  local names = {}
  for _, f in ipairs(files) do
    table.insert(names, workspace_path(f.path) .. instruction_marks(f))
  end
  return table.concat(names, ", ")
end

-- instructions_line is the chat's line under the header when the session's
-- turns give the model the project's instructions files, nil when none.
local instructions_prefix = "_instructions: "
local function instructions_line(id)
  local text = instructions_text(state.instructions[id])
  return text and (instructions_prefix .. text .. "_") or nil
end

-- set_header shows session id's header line (see header_line) and under it
-- the instructions line (see instructions_line), added or removed as they
-- come and go (the running turn's "thinking" line moves with them).
local function set_header(id)
  local buf = state.bufs[id]
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return
  end
  set_lines(buf, 1, 2, { header_line(id) })
  local line = instructions_line(id)
  local third = vim.api.nvim_buf_get_lines(buf, 2, 3, false)[1] or ""
  local shown = third:sub(1, #instructions_prefix) == instructions_prefix
  local moved = 0
  if line and shown then
    set_lines(buf, 2, 3, { line })
  elseif line then
    set_lines(buf, 2, 2, { line })
    moved = 1
  elseif shown then
    set_lines(buf, 2, 3, {})
    moved = -1
  end
  local turn = state.turn
  if moved ~= 0 and turn and turn.buf == buf and turn.thinking and turn.thinking >= 2 then
    turn.thinking = turn.thinking + moved
  end
end

-- set_instructions records the instructions files session id's turns give
-- the model (from a read of its context, or a turn's result) and shows
-- them in its chat.
local function set_instructions(id, files)
  state.instructions_asked = state.instructions_asked + 1
  state.instructions_seq[id] = state.instructions_asked -- reads asked before are older
  state.instructions[id] = (type(files) == "table" and #files > 0) and files or nil
  set_header(id)
end

-- refresh_instructions reads which instructions files session id's next
-- turn gives the model (ctxls.context.get; a session not made yet, "new-N":
-- the workspace's) and shows them in its chat.
local function refresh_instructions(id)
  if not id or not M.client() then
    return
  end
  state.instructions_asked = state.instructions_asked + 1
  local seq = state.instructions_asked
  state.instructions_seq[id] = seq
  local arg = id:find("^new%-") and {} or { sessionId = id }
  M.command(P.commands.context_get, arg, function(r)
    if state.instructions_seq[id] == seq then
      set_instructions(id, r.instructions)
    end
  end, function() end) -- a session deleted meanwhile: nothing to show
end

-- header_from records what a stored session says for its header: its
-- model, the last answer's, the usage of every answer.
-- stamp is a key that sorts as the times it is given (RFC 3339, as the
-- daemon writes them: fractions of varying length).
local function stamp(t)
  if type(t) ~= "string" then
    return ""
  end
  local base, frac, zone = t:match("^([%d%-]+T[%d:]+)%.?(%d*)(.*)$")
  if not base then
    return t
  end
  return base .. "." .. frac .. string.rep("0", 9 - #frac) .. zone
end

local function header_from(sess, messages)
  local chosen = (sess.meta or {}).model or ""
  -- A session read before the user's last :CtxlsModel answered is older
  -- than that choice: the choice stands (a read in flight then came back
  -- after it and put the model before it back).
  local at = state.model_at[sess.id]
  if at and stamp(sess.updatedAt) < at then
    chosen = (state.header[sess.id] or {}).chosen or chosen
  end
  local h = { chosen = chosen }
  for _, m in ipairs(messages or {}) do
    if m.role == "assistant" then
      if m.model and m.model ~= "" then
        h.last = m.model
      end
      h.usage = add_usage(h.usage, m.usage)
    end
  end
  state.header[sess.id] = h
  set_header(sess.id)
end

-- chat_buffer returns the chat buffer of a session, made on first use,
-- with a header naming the session, its model and usage.
local function chat_buffer(id)
  local buf = state.bufs[id]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(buf, "ctxls://chat/" .. id:sub(1, 6))
  vim.api.nvim_buf_set_option(buf, "filetype", "markdown")
  vim.api.nvim_buf_set_option(buf, "bufhidden", "hide")
  set_lines(buf, 0, -1, { "# " .. (state.titles[id] or "New session"), header_line(id), "" })
  vim.api.nvim_buf_set_var(buf, "ctxls_session", id)
  tools.keys(buf)
  -- Enter on a tool call's line shows its output (tools.keys), on a
  -- search's result line opens the file there, on the compaction mark
  -- shows the summary.
  vim.keymap.set("n", "<CR>", function()
    local lnum = vim.fn.line(".")
    if tools.is_call_line(buf, lnum) then
      return "za"
    end
    if tools.match_at(buf, lnum) then
      return "<Cmd>lua require('ctxls').open_match()<CR>"
    end
    if (vim.fn.getline(lnum)):find("^_summarised for the model") then
      return "<Cmd>lua require('ctxls').summary()<CR>"
    end
    if images.name_at(vim.fn.getline(lnum)) then
      return "<Cmd>lua require('ctxls').open_image()<CR>"
    end
    return "<CR>"
  end, { buffer = buf, expr = true, desc = "ctxls: a tool call's output, a search's match, the summary, or an image" })
  vim.keymap.set("n", "gf", function()
    return images.name_at(vim.fn.getline(".")) and "<Cmd>lua require('ctxls').open_image()<CR>" or "gf"
  end, { buffer = buf, expr = true, desc = "ctxls: the image on this line, else the file under the cursor" })
  -- Answers are prose in whatever window shows them, the plugin's own
  -- (show_chat) included.
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      prose_window(vim.api.nvim_get_current_win())
    end,
  })
  state.bufs[id] = buf
  set_header(id) -- with the instructions known, then read again
  refresh_instructions(id)
  return buf
end

local function is_chat(buf)
  return vim.api.nvim_buf_get_name(buf):find("^ctxls://") ~= nil
end

-- show_chat shows buf in the window showing a chat buffer, else a new one.
local function show_chat(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)):find("^ctxls://chat/") then
      vim.api.nvim_win_set_buf(win, buf)
      return win
    end
  end
  vim.cmd("botright vsplit")
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  return win
end

-- drawing: a chat is being drawn whole (render_history): the windows
-- follow it once, at the end, not at each message.
local drawing = false

local function follow(buf)
  if drawing then
    return
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
    end
  end
  redraw()
end

local function append(buf, text)
  if tools.after_tool(buf) and text:sub(1, 1) ~= "\n" then
    text = "\n" .. text -- prose after a tool call starts after a blank line
  end
  local last = vim.api.nvim_buf_line_count(buf)
  local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
  set_lines(buf, last - 1, last, vim.split(tail .. text, "\n", { plain = true }))
  follow(buf)
end

-- Each question's "## You" line carries a mark of this namespace: the
-- questions of a chat in order (:CtxlsRetry, :CtxlsEdit).
local question_ns = vim.api.nvim_create_namespace("ctxls_questions")

-- An image's line under a question (images.line) is underlined, as a link:
-- Enter opens the image.
local image_ns = vim.api.nvim_create_namespace("ctxls_images")
local function image_highlight()
  vim.api.nvim_set_hl(0, "CtxlsImage", { default = true, link = "Underlined" })
end
image_highlight()

-- append_question appends a question's heading and text and marks it.
local function append_question(buf, text)
  local row = vim.api.nvim_buf_line_count(buf) -- "\n## You": the line after the last
  append(buf, "\n## You\n\n" .. text)
  vim.api.nvim_buf_set_extmark(buf, question_ns, row, 0, { right_gravity = false })
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, row, -1, false)) do
    if images.name_at(line) then
      vim.api.nvim_buf_set_extmark(buf, image_ns, row + i - 1, 0, { end_col = #line, hl_group = "CtxlsImage" })
    end
  end
end

-- question_rows are the rows of buf's questions, in order.
local function question_rows(buf)
  local rows = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, question_ns, 0, -1, {})) do
    table.insert(rows, m[2])
  end
  return rows
end

-- redraw_status redraws every window's status line, so a 'statusline' that
-- shows M.statusline() is current in inactive windows too.
local function redraw_status()
  vim.schedule(function()
    pcall(vim.cmd, "redrawstatus!")
  end)
end

local function set_title(id, title)
  state.titles[id] = title
  redraw_status()
  local buf = state.bufs[id]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    set_lines(buf, 0, 1, { "# " .. title })
  end
end

-- first_questions says what a summary of the first n questions covers, as
-- people count a conversation: "the first question and its answer", "the
-- first 3 questions and their answers".
local function first_questions(n)
  if n == 1 then
    return "the first question and its answer"
  end
  return string.format("the first %d questions and their answers", n)
end

-- compacted_line marks where the model's view of a session starts: after
-- the last message its newest summary covers.
local function compacted_line(span)
  return string.format("\n---\n_summarised for the model: %s; all are kept here (Enter: the summary)_\n", first_questions(span.questions or 0))
end

-- signature sums a session's stored messages up: it changes when a message
-- is added, or the last one grows or ends (a turn made elsewhere).
local function signature(messages)
  messages = messages or {}
  local last = messages[#messages]
  if not last then
    return "0"
  end
  return string.format("%d:%s:%s:%d", #messages, tostring(last.id), tostring(last.status), #(last.content or ""))
end

-- questions counts the questions among a session's stored messages.
local function questions(messages)
  local n = 0
  for _, m in ipairs(messages or {}) do
    if m.role == "user" then
      n = n + 1
    end
  end
  return n
end

-- status_notes: what an answer's stored status adds after its text. A
-- cancelled answer was stopped by the user; an interrupted one was cut off
-- when its daemon stopped (a crash, the editor closed); a streaming one is
-- being written by another daemon (a turn made elsewhere).
local status_notes = {
  [P.status.cancelled] = "\n\n_cancelled_",
  [P.status.interrupted] = "\n\n_interrupted: the daemon stopped before the answer ended_",
  [P.status.error] = "\n\n_failed_",
  [P.status.streaming] = "\n\n_answering elsewhere…_",
}

-- render_history fills a session's buffer with its stored messages, the
-- newest summary's mark after the last message it covers.
local render_messages -- below

local function render_history(sess, messages)
  drawing = true
  local ok, buf = pcall(render_messages, sess, messages)
  drawing = false
  if not ok then
    error(buf, 0)
  end
  follow(buf)
  return buf
end

-- stored_with is the line naming the files that went with a stored
-- question (its files, as the daemon kept them: absolute, with lines),
-- relative to the workspace: "_with main.go, auth/login.go:3_\n\n", or
-- "" for none.
local function stored_with(files)
  if type(files) ~= "table" or #files == 0 then
    return ""
  end
  local c = M.client()
  local root = (c and c.config and c.config.root_dir) or vim.loop.cwd()
  root = root:gsub("/$", "") .. "/"
  local labels = {}
  for _, f in ipairs(files) do
    local path, lines = f:match("^(.-)(:%d+%-?%d*)$")
    path = path or f
    if path:sub(1, #root) == root then
      path = path:sub(#root + 1)
    else
      path = vim.fn.fnamemodify(path, ":t")
    end
    table.insert(labels, path .. (lines or ""))
  end
  return "_with " .. table.concat(labels, ", ") .. "_\n\n"
end

function render_messages(sess, messages)
  state.shown[sess.id] = signature(messages)
  state.questions[sess.id] = questions(messages)
  set_title(sess.id, sess.title)
  local buf = chat_buffer(sess.id)
  tools.forget(buf)
  vim.api.nvim_buf_clear_namespace(buf, question_ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(buf, image_ns, 0, -1)
  set_lines(buf, 0, -1, { "# " .. sess.title, "", "" })
  header_from(sess, messages)
  local span
  for _, m in ipairs(messages or {}) do
    if m.summaryOf then
      span = m.summaryOf -- oldest first: the last one is the newest
    end
  end
  -- The mark goes after the answer that ends the last turn covered: before
  -- the first question past the summary's range, or at the end.
  local marked = false
  local function mark()
    if span and not marked then
      append(buf, compacted_line(span))
      marked = true
    end
  end
  -- The tool calls' results, by call: shown under the calls' lines.
  local results = {}
  for _, m in ipairs(messages or {}) do
    if m.role == "tool" and m.toolCallId then
      results[m.toolCallId] = m
    end
  end
  -- answered: this turn's answer has its heading (a turn with tool calls
  -- is stored as an answer per round, shown as one); used: what its
  -- answers cost, shown after it.
  local answered, used = false, nil
  local function turn_usage()
    local u = usage_text(used)
    if u then
      append(buf, "\n_tokens: " .. u .. "_\n")
    end
    used = nil
  end
  for _, m in ipairs(messages or {}) do
    if m.role == "user" then
      turn_usage()
    end
    if span and m.role == "user" and m.id > span.last then
      mark()
    end
    if m.role == "user" then
      append_question(buf, stored_with(m.files) .. images.shown(m.content) .. "\n")
      answered = false
    elseif m.role == "assistant" then
      used = add_usage(used, m.usage)
      local calls = tools.stored_calls(m, results)
      if m.content == "" and #calls == 0 and m.status == P.status.streaming then
        -- Being answered by another daemon: its words come with the next
        -- update.
        append(buf, (answered and "" or "\n## ctxls\n\n") .. "_answering elsewhere…_\n")
        answered = true
      elseif m.content ~= "" or #calls > 0 then
        local head = answered and "" or "\n## ctxls\n\n"
        answered = true
        if m.content ~= "" then
          local note = status_notes[m.status] or ""
          append(buf, head .. m.content .. note .. "\n")
        elseif head ~= "" then
          append(buf, head)
        end
        for _, c in ipairs(calls) do
          tools.update(buf, c)
        end
      end
    end
  end
  turn_usage()
  mark()
  return buf
end

-- Turns made elsewhere --------------------------------------------------------

-- running_in reports whether a turn of session id is running (or on its
-- way) in this Neovim: its chat buffer is then being written.
local function running_in(id)
  return (state.turn and state.turn.session == id) or (state.asking and state.current == id)
end

-- redraw_keeping runs draw, which writes buf anew: a window whose cursor
-- was on the last line follows the end, the others keep their line.
local function redraw_keeping(buf, draw)
  local at = {}
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local row = vim.api.nvim_win_get_cursor(win)[1]
    at[win] = row >= last and "end" or row
  end
  draw()
  local n = vim.api.nvim_buf_line_count(buf)
  for win, row in pairs(at) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { row == "end" and n or math.min(row, n), 0 })
    end
  end
  redraw()
end

-- refresh reads session id again and shows its stored messages in its open
-- chat buffer when they changed since the buffer showed them: a turn asked
-- in another editor (or another Neovim) on the same sessions. A turn
-- streaming here is never overwritten: its end is settled instead.
local refresh
function refresh(id)
  local buf = id and state.bufs[id]
  if not buf or not vim.api.nvim_buf_is_valid(buf) or not M.client() or running_in(id) then
    return
  end
  M.command(P.commands.session_show, { sessionId = id }, function(r)
    if state.settling[id] then
      -- A turn that ended here is being recorded: read again after it.
      vim.defer_fn(function()
        refresh(id)
      end, 100)
      return
    end
    if running_in(id) or not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    if signature(r.messages) ~= state.shown[id] then
      redraw_keeping(buf, function()
        render_history(r.session, r.messages)
      end)
    end
  end, function() end) -- a session deleted meanwhile: nothing to show
end

-- settle records what the store holds once a turn that ran here ended (the
-- buffer shows it already), or shows it all again when the store holds
-- questions the buffer does not (asked elsewhere meanwhile).
local function settle(turn)
  if turn.settled then
    return
  end
  turn.settled = true
  local id = turn.session
  state.settling[id] = (state.settling[id] or 0) + 1
  local function done()
    state.settling[id] = state.settling[id] > 1 and state.settling[id] - 1 or nil
  end
  M.command(P.commands.session_show, { sessionId = id }, function(r)
    done()
    if running_in(id) then
      return
    end
    if questions(r.messages) ~= (state.questions[id] or 0) then
      render_history(r.session, r.messages)
      follow(state.bufs[id])
    else
      state.shown[id] = signature(r.messages)
      header_from(r.session, r.messages)
    end
  end, done)
end

-- Turns ------------------------------------------------------------------------

-- finish ends the running turn once: from the progress end, the reply, or a
-- cancelled request whose reply Neovim 0.7 drops.
local function finish(turn, how, more)
  if turn.done then
    return
  end
  turn.done = true
  -- The daemon's errors held while the turn had not begun (see
  -- window/showMessage): not the refusal its reply said already.
  for _, m in ipairs(turn.held or {}) do
    notify(m.msg, m.level)
  end
  turn.held = nil
  if state.turn == turn then
    state.turn = nil
    redraw_status()
  end
  -- An edit still shown for review is moot once its turn has ended.
  review.end_session(turn.session)
  if turn.thinking then
    set_lines(turn.buf, turn.thinking, turn.thinking + 1, {})
    turn.thinking = nil
  end
  if how == "cancelled" then
    append(turn.buf, "\n\n_cancelled_")
  elseif how and how ~= "done" then
    append(turn.buf, "\n\n_" .. how:gsub("\n", " ") .. "_")
  end
  if more then -- (what to do about it: a paragraph of its own)
    append(turn.buf, "\n\n" .. more)
  end
  append(turn.buf, "\n")
  local used = usage_text(turn.usage)
  if used then
    append(turn.buf, "\n_tokens: " .. used .. "_\n")
    local h = state.header[turn.session] or {}
    h.usage = add_usage(h.usage, turn.usage)
    state.header[turn.session] = h
    set_header(turn.session)
  end
  redraw()
  if turn.fresh then
    -- Still no session known (the reply Neovim 0.7 drops for a cancelled
    -- request would say it): ask the daemon.
    learn(turn)
  end
  if how == "cancelled" then
    -- Neovim 0.7 drops a cancelled request's reply, which settles the turn.
    vim.defer_fn(function()
      settle(turn)
    end, 1000)
  end
end

-- tell shows a message of the daemon's during turn once: a warning (an MCP
-- server's configuration) comes both as window/showMessage and as the
-- turn's progress report.
local function tell(turn, msg, level)
  turn.told = turn.told or {}
  if not turn.told[msg] then
    turn.told[msg] = true
    notify(msg, level)
  end
end

local function on_progress(err, result, ctx, config)
  local turn = state.turn
  if turn and result and result.token == turn.token then
    local v = result.value or {}
    if v.kind == "begin" then
      turn.begun = true
    end
    if turn.fresh and v.kind == "begin" then
      learn(turn) -- the turn has made its session
    end
    if v.delta then
      if turn.thinking then
        set_lines(turn.buf, turn.thinking, turn.thinking + 1, {})
        turn.thinking = nil
      end
      append(turn.buf, v.delta)
    elseif v.kind == "report" and type(v.usage) == "table" then
      turn.usage = v.usage -- the turn's, once its provider requests ended
    elseif v.kind == "end" then
      finish(turn, v.message)
    elseif v.kind == "report" and v.message then
      if turn.tool_note then
        turn.tool_note = nil -- the tool call's line says it already
      else
        tell(turn, v.message)
      end
    end
    return
  end
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

-- context_line sums a context up in one line: "files (2), ports (1)".
local function context_line(ctx)
  local parts = {}
  for name, items in pairs(ctx or {}) do
    if name == "applet" then
      table.insert(parts, "editor view")
    else
      table.insert(parts, string.format("%s (%d)", name, #items))
    end
  end
  table.sort(parts)
  return #parts > 0 and table.concat(parts, ", ") or "empty"
end

-- permission_timeout is how long the daemon waits for a permission answer.
local function permission_timeout()
  local s = M.config.tool_permission_timeout_seconds
  return (type(s) == "number" and s >= 1) and s or 120
end

local handlers = {
  ["$/progress"] = on_progress,
  -- A tool call began or changed: its line in the session's chat buffer.
  [P.notifications.tool_call] = function(_, p)
    local buf, turn = state.bufs[p.sessionId], state.turn
    if turn and turn.fresh then
      adopt(turn, p.sessionId) -- only the turn's own session calls tools now
    end
    if turn and turn.session == p.sessionId then
      buf = turn.buf
      turn.tool_note = true -- its $/progress line follows
      if turn.thinking then
        set_lines(turn.buf, turn.thinking, turn.thinking + 1, {})
        turn.thinking = nil
      end
    end
    if buf and vim.api.nvim_buf_is_valid(buf) then
      tools.update(buf, p)
      follow(buf)
    end
  end,
  [P.notifications.context_changed] = function(_, p)
    -- Only what the user or the model changed is told: the editor view
    -- (the applet set, captured when the cursor rests) changes all the time.
    local others = {}
    for name, items in pairs(p.context or {}) do
      if name ~= "applet" then
        others[name] = items
      end
    end
    local key = vim.inspect(others)
    local before = state.told_context[p.sessionId] or vim.inspect({})
    state.told_context[p.sessionId] = key
    if p.reason ~= "resume" and before == key then
      return
    end
    local head = p.reason == "resume" and "resumed context: " or "context changed: "
    local missing = (p.missing and #p.missing > 0) and string.format("; %d missing", #p.missing) or ""
    notify(head .. context_line(p.context) .. missing .. " (:CtxlsContext)")
    -- The files' folders may hold instructions files of their own.
    if state.bufs[p.sessionId] then
      refresh_instructions(p.sessionId)
    end
  end,
  -- A session's title changed, or (with a store other daemons share) its
  -- messages: an open chat shows turns made elsewhere.
  [P.notifications.session_updated] = function(_, p)
    if p.title and p.title ~= "" then
      set_title(p.sessionId, p.title)
    end
    refresh(p.sessionId)
  end,
  [P.notifications.session_files_changed] = function(_, p)
    local buf = state.bufs[p.sessionId]
    if buf and vim.api.nvim_buf_is_valid(buf) and p.by == "model" then
      local last = vim.api.nvim_buf_line_count(buf)
      local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1]
      append(buf, string.format("%s_wrote %s/%s (%d bytes)_\n\n", tail == "" and "\n" or "\n\n", p.subdir, p.name, p.size))
    end
  end,
  -- The daemon's messages already say ctxls: shown once, on one line.
  ["window/showMessage"] = function(_, p)
    local msg = (p.message or ""):gsub("^ctxls: ", "")
    local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
    local level = levels[p.type] or vim.log.levels.INFO
    local turn = state.turn
    if turn and not turn.done then
      if p.type == 1 and not turn.begun then
        -- An error before the turn began is the refusal its reply will
        -- bring (no provider: the plugin says it in Neovim's words): held
        -- until then, so that it is said once, and one message cannot
        -- push another into a Press ENTER.
        turn.held = turn.held or {}
        table.insert(turn.held, { msg = msg, level = level })
        return
      end
      return tell(turn, msg, level)
    end
    notify(msg, level)
  end,
  -- The daemon asks before the model calls an MCP tool, or uses a
  -- workspace's .mcp.json: the question is lines in the chat with keys
  -- there (:help ctxls-questions), never a prompt.
  [P.notifications.question] = function(_, p)
    questions_ui.ask(p)
  end,
  [P.notifications.question_closed] = function(_, p)
    questions_ui.close(p)
  end,
  -- A daemon too old for ctxls/question asks this way: a numbered prompt
  -- (no answer within the timeout denies).
  ["window/showMessageRequest"] = function(_, p)
    return tools.ask(p, permission_timeout())
  end,
  -- The daemon asks before it applies an edit of the model's: the diff in
  -- a tab, answered when the user decides (:help ctxls-edits).
  [P.server_requests.review_edit] = function(_, p)
    return review.request(p, permission_timeout())
  end,
  -- The model's diagnostics tool asks for vim.diagnostic's diagnostics
  -- (:help ctxls-diagnostics).
  [P.server_requests.diagnostics] = function(_, p, ctx)
    return diagnostics.request(p, vim.lsp.get_client_by_id(ctx.client_id))
  end,
  -- An accepted edit, applied to the buffer (unsaved, undoable).
  ["workspace/applyEdit"] = function(_, p, ctx)
    return edits.apply(p, vim.lsp.get_client_by_id(ctx.client_id), function(buf)
      M.attach(buf)
    end)
  end,
}

-- chat_buf_for is the chat a question or a review of session p.sessionId
-- shows in: the running turn's buffer, else the session's open one.
local function chat_buf_for(p)
  local turn = state.turn
  if turn and turn.fresh and p.sessionId and p.sessionId ~= "" then
    adopt(turn, p.sessionId)
  end
  if turn and (turn.session == p.sessionId or not p.sessionId or p.sessionId == "") then
    if turn.thinking then
      set_lines(turn.buf, turn.thinking, turn.thinking + 1, {})
      turn.thinking = nil
    end
    return turn.buf
  end
  local buf = p.sessionId and state.bufs[p.sessionId]
  return (buf and vim.api.nvim_buf_is_valid(buf)) and buf or nil
end

review.setup({
  buf_for = chat_buf_for,
  follow = function(buf)
    follow(buf)
  end,
})

questions_ui.setup({
  -- A question shows in its session's chat.
  buf_for = chat_buf_for,
  follow = function(buf)
    follow(buf)
  end,
  notify = function(msg, level)
    notify(msg, level)
  end,
  timeout = function()
    return permission_timeout()
  end,
  answer = function(id, action, on_err)
    M.command(P.commands.question_answer, { id = id, action = action }, nil, on_err)
  end,
})

-- capabilities: Neovim's, with what the daemon needs to apply the model's
-- edits in the buffers: versioned TextDocumentEdits and CreateFile, and
-- to undo them (:CtxlsUndo): DeleteFile of a file a turn created.
local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  caps.workspace.workspaceEdit.resourceOperations = { "create", "delete" }
  return caps
end

-- Starting and attaching ----------------------------------------------------

local function server_cmd()
  local cmd = vim.deepcopy(M.config.cmd)
  if M.config.log_file and not vim.tbl_contains(cmd, "--log-file") then
    vim.fn.mkdir(vim.fn.fnamemodify(M.config.log_file, ":h"), "p")
    vim.list_extend(cmd, { "--log-file", M.config.log_file })
  end
  return cmd
end

-- resolved_cmd is config.cmd with its program found: on $PATH, else in
-- Go's install folder ($GOBIN, $GOPATH/bin, ~/go/bin), as the VS Code
-- extension looks. nil when it is nowhere: state.missing then says where
-- it looked, in one line for the command line (what matters first:
-- :checkhealth ctxls), and state.missing_help also what to do.
local function resolved_cmd()
  local cmd = server_cmd()
  local prog = cmd[1]
  if vim.fn.executable(prog) == 1 then
    return cmd
  end
  if prog:find("/") then
    state.missing = string.format("ctxls is not installed (:checkhealth ctxls): no %s", vim.fn.fnamemodify(prog, ":~"))
    state.missing_help = string.format("ctxls is not installed at %s (cmd in require(\"ctxls\").setup())", prog)
  else
    local dirs = {}
    if vim.env.GOBIN and vim.env.GOBIN ~= "" then
      table.insert(dirs, vim.env.GOBIN)
    end
    if vim.env.GOPATH and vim.env.GOPATH ~= "" then
      table.insert(dirs, vim.env.GOPATH .. "/bin")
    end
    table.insert(dirs, vim.fn.expand("~/go/bin"))
    for _, d in ipairs(dirs) do
      if vim.fn.executable(d .. "/" .. prog) == 1 then
        cmd[1] = d .. "/" .. prog
        return cmd
      end
    end
    local shown = vim.tbl_map(function(d)
      return vim.fn.fnamemodify(d, ":~")
    end, dirs)
    state.missing = string.format("ctxls is not installed (:checkhealth ctxls): %s is neither on $PATH nor in %s", prog, table.concat(shown, " or "))
    state.missing_help = string.format("ctxls is not installed: %s is neither on $PATH nor in %s. Install it with CGO_ENABLED=0 go install ./cmd/ctxls in a clone of ctxls (its README), or set cmd in require(\"ctxls\").setup()", prog, table.concat(dirs, " or "))
  end
  return nil
end

-- resolve_cmd is the daemon's command with its program found, or nil and
-- what to do (:checkhealth ctxls).
function M.resolve_cmd()
  local cmd = resolved_cmd()
  return cmd, not cmd and state.missing_help or nil
end

-- settings are the daemon's settings it may be given while it runs
-- (workspace/didChangeConfiguration): at start, and when setup() is called
-- again.
local function settings()
  local s = P.settings
  return { ctxls = { [s.provider] = key.wire(M.config.provider), [s.project_instructions] = M.config.project_instructions ~= false } }
end

-- The key setup() gives (provider.api_key) -----------------------------------

-- key_spec is provider.api_key as setup() gives it, or nil.
local function key_spec()
  return type(M.config.provider) == "table" and M.config.provider.api_key or nil
end

-- key_env is what the daemon's environment gets beside Neovim's: the key
-- provider.api_key gives, under the variable the daemon reads it from
-- (cmd_env), or nil when setup() gives none (the daemon then reads the
-- variable from Neovim's environment, which it inherits). The key is
-- looked up when a daemon starts, not each time a buffer attaches:
-- state.key holds what was found ({ spec, name, value, err }) until
-- renew_key looks again. A command or function that fails is said,
-- without the key's text (not again when it fails the same way:
-- said_err); the daemon then starts without it.
local function key_env(said_err)
  local spec, name = key_spec(), key.env_name(M.config.provider)
  local k = state.key
  if not k or k.spec ~= spec or k.name ~= name then
    local value, err = key.resolve(spec)
    k = { spec = spec, name = name, value = value, err = err }
    state.key = k
    if err and err ~= said_err then
      -- Not from within the autocommand that opens a file (see attach).
      vim.schedule(function()
        notify(err, vim.log.levels.WARN)
      end)
    end
  end
  return k.value and { [k.name] = k.value } or nil
end

local function lsp_config()
  local o = P.init_options
  local init = {
    [o.provider] = key.wire(M.config.provider),
    [o.data_dir] = M.config.data_dir,
    [o.view_idle_ms] = M.config.view_idle_ms,
    [o.compact_at] = M.config.compact_at,
    [o.mcp_servers] = M.config.mcp_servers,
    [o.allow_read_only_tools] = M.config.allow_read_only_tools,
    [o.tool_permission_timeout_seconds] = M.config.tool_permission_timeout_seconds,
    [o.project_instructions] = M.config.project_instructions ~= false,
    [o.review_edits] = true,
    [o.diagnostics] = true,
    [o.questions] = true,
  }
  return {
    name = "ctxls",
    cmd = resolved_cmd(),
    cmd_env = key_env(),
    root_dir = vim.loop.cwd(),
    init_options = init,
    capabilities = capabilities(),
    handlers = handlers,
    flags = { debounce_text_changes = M.config.debounce },
    settings = settings(),
  }
end

local function attachable(buf)
  return vim.api.nvim_buf_is_valid(buf)
    and vim.api.nvim_buf_get_option(buf, "buftype") == ""
    and vim.api.nvim_buf_get_name(buf) ~= ""
    and not is_chat(buf)
end

-- ensure_client returns the daemon's client, starting it when no file has
-- (Neovim opened without one): asking and the session commands need no file.
function M.ensure_client()
  local client = M.client()
  if client then
    return client
  end
  if not resolved_cmd() then
    return nil
  end
  state.client_id = key.quietly(function()
    if vim.fn.has("nvim-0.11") == 1 then
      return vim.lsp.start(lsp_config(), { attach = false })
    end
    return vim.lsp.start_client(lsp_config())
  end)
  return M.client()
end

function M.attach(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  if not attachable(buf) then
    return
  end
  state.last_file = buf
  if not M.client() and not resolved_cmd() then
    if not state.missing_told then -- once, not on every file opened
      state.missing_told = true
      -- Not from within the autocommand that opens the file: an error
      -- there reads "Error detected while processing BufReadPost", then
      -- Press ENTER.
      vim.schedule(function()
        notify(state.missing, vim.log.levels.WARN)
      end)
    end
    return
  end
  if vim.lsp.start then
    -- 0.8+: starts the client once (same name and root) and attaches buf.
    local id = key.quietly(function()
      return vim.lsp.start(lsp_config(), { bufnr = buf })
    end)
    if id then
      state.client_id = id
    end
    return
  end
  -- 0.7
  if not M.client() then
    state.client_id = key.quietly(function()
      return vim.lsp.start_client(lsp_config())
    end)
  end
  if state.client_id then
    vim.lsp.buf_attach_client(buf, state.client_id)
  end
end

-- restart stops the daemon and starts another (with the environment
-- key_env gives now), attaching the loaded buffers again: the sessions are
-- in its store, and the chats name theirs in each request.
local function restart()
  local client, id = M.client(), state.client_id
  if client then
    if vim.fn.has("nvim-0.11") == 1 then
      client:stop()
    else
      client.stop()
    end
    -- (vim.lsp.start would take the stopping client for the new one.)
    vim.wait(5000, function()
      return vim.lsp.get_client_by_id(id) == nil
    end, 20)
  end
  state.client_id = nil
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
  M.ensure_client()
end

-- renew_key looks the key up again (a question was refused for want of a
-- provider, or setup() gave another provider.api_key) and, when it is not
-- the one the running daemon has, starts the daemon again with it: the
-- user who has just set the key need not restart Neovim.
local function renew_key()
  local said = state.key and state.key.err
  state.key = nil
  local client = M.client()
  if not client then
    return -- the next daemon looks it up as it starts
  end
  local env = key_env(said) or {}
  local name = state.key.name
  local had = (client.config.cmd_env or {})[name]
  if had ~= env[name] then
    restart()
    return true
  end
end

-- view sends ctxls/didChangeView for the current window: the file, the
-- selection (the cursor, or the visual selection) and the visible lines.
function M.view()
  local client, buf = M.client(), vim.api.nvim_get_current_buf()
  if not client or not client.initialized or not attachable(buf) then
    return
  end
  local cur = vim.api.nvim_win_get_cursor(0)
  local from, to = { cur[1] - 1, cur[2] }, { cur[1] - 1, cur[2] }
  local mode = vim.api.nvim_get_mode().mode
  if mode == "v" or mode == "V" or mode == "\22" then
    local v = vim.fn.getpos("v")
    from = { math.min(v[2], cur[1]) - 1, 0 }
    to = { math.max(v[2], cur[1]) - 1, 0 }
  end
  local pos = function(p)
    return { line = p[1], character = p[2] }
  end
  client_notify(client, P.client_notifications.did_change_view, {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    selection = { start = pos(from), ["end"] = pos(to) },
    visibleRange = { start = { line = vim.fn.line("w0") - 1, character = 0 }, ["end"] = { line = vim.fn.line("w$") - 1, character = 0 } },
  })
end

-- helptags makes :help ctxls work right after the plugin is put on the
-- runtimepath: doc/tags is generated when missing or older than the help.
local function helptags()
  local src = debug.getinfo(1, "S").source:sub(2) -- .../lua/ctxls/init.lua
  local doc = vim.fn.fnamemodify(src, ":h:h:h") .. "/doc"
  local help, tags = doc .. "/ctxls.txt", doc .. "/tags"
  if vim.fn.filereadable(help) == 1 and vim.fn.getftime(tags) < vim.fn.getftime(help) then
    pcall(vim.cmd, "silent helptags " .. vim.fn.fnameescape(doc))
  end
end

function M.setup(opts)
  local spec_before, name_before = key_spec(), key.env_name(M.config.provider)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  helptags()
  -- Called again with another key (or where it goes) while the daemon
  -- runs: the daemon gets the new one (it reads it from its environment),
  -- started again now, or, while a turn runs, before the next question.
  local rekeyed = M.client() and (key_spec() ~= spec_before or key.env_name(M.config.provider) ~= name_before)
  local restarted = false
  if rekeyed and (state.turn or state.asking) then
    state.key_recheck = true
  elseif rekeyed then
    restarted = renew_key()
  end
  -- Called again while the daemon runs: the settings it takes then go to
  -- it (from its next turn), and the chats name the instructions files
  -- that now go.
  local client = M.client()
  if client and not restarted then -- (a daemon started now has them)
    client.config.settings = settings()
    if client.settings then
      client.settings = client.config.settings -- (0.11: what workspace/configuration reads)
    end
    client_notify(client, "workspace/didChangeConfiguration", { settings = client.config.settings })
    for id in pairs(state.bufs) do
      refresh_instructions(id)
    end
  end
  local group = vim.api.nvim_create_augroup("ctxls", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = image_highlight })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    callback = function(a)
      M.attach(a.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "CursorHold", "BufEnter" }, {
    group = group,
    callback = function()
      M.view()
    end,
  })
  -- Turns made elsewhere on the same sessions: the daemon says so with
  -- ctxls/sessionUpdated (PostgreSQL, and SQLite since it looks every half
  -- second); the chat is also read again when you come back to Neovim or
  -- enter it (a daemon too old to tell).
  vim.api.nvim_create_autocmd("FocusGained", {
    group = group,
    callback = function()
      for id in pairs(state.bufs) do
        refresh(id)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(a)
      local ok, id = pcall(vim.api.nvim_buf_get_var, a.buf, "ctxls_session")
      if ok and id then
        refresh(id)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "WinEnter", "BufEnter" }, {
    group = group,
    callback = function()
      if attachable(vim.api.nvim_get_current_buf()) then
        state.last_win = vim.api.nvim_get_current_win()
      end
    end,
  })
  -- On the way out Neovim's own exit handler asks the daemon to shut down;
  -- from 0.10 Neovim then quits without waiting for it to end (0.7 waits
  -- up to half a second): the daemon may still be writing its data folder,
  -- and Neovim may die of SIGPIPE, writing to it once it has gone while
  -- Neovim tears down. Wait for it here as 0.7 does. (vim.lsp is loaded
  -- first, so its handler, which sends the shutdown, runs before this.)
  local _ = vim.lsp
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      if M.client() then
        vim.wait(500, function()
          return M.client() == nil
        end, 10)
      end
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

-- Commands ------------------------------------------------------------------

-- with_session calls cb with the current session's id, creating a session
-- first when there is none (so the chat buffer belongs to it from the start).
-- Commands run before the new session's id is back (:CtxlsAdd then :CtxlsAsk
-- right after start-up) wait for that one session instead of making one each;
-- those run while a session is being resumed wait for it (resume).
local function with_session(cb)
  if state.resuming then
    table.insert(state.resuming, cb)
    return
  end
  if state.current then
    return cb(state.current)
  end
  if state.creating then
    table.insert(state.creating, cb)
    return
  end
  state.creating = { cb }
  M.command(P.commands.session_new, {}, function(r)
    local waiting = state.creating
    state.creating = nil
    state.current = r.session.id
    set_title(r.session.id, r.session.title)
    for _, f in ipairs(waiting) do
      f(r.session.id)
    end
  end, function(err)
    state.creating = nil
    state.asking = false
    notify(P.commands.session_new .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end)
end

-- active_file is the file a question is about: the current buffer's,
-- else (from the chat) the last file entered; nil when there is none.
local function active_file()
  local buf = vim.api.nvim_get_current_buf()
  if not attachable(buf) then
    buf = state.last_file
  end
  if not buf or not vim.api.nvim_buf_is_valid(buf) or not attachable(buf) then
    return nil
  end
  return vim.api.nvim_buf_get_name(buf)
end

-- turn_file is what goes with a question (see config.send_active_file):
-- the item sent ("/abs/main.go" or "/abs/main.go:5-8") and how it is shown
-- ("main.go:5-8"); nil when nothing goes.
function M.turn_file(opts)
  opts = opts or {}
  if opts.bang or (not M.config.send_active_file and not opts.range) then
    return nil
  end
  local path = active_file()
  if not path then
    return nil
  end
  local item, label = path, vim.fn.fnamemodify(path, ":t")
  local r = opts.range
  if r then
    local lines = r[1] == r[2] and tostring(r[1]) or string.format("%d-%d", r[1], r[2])
    item, label = item .. ":" .. lines, label .. ":" .. lines
  end
  return { item = item, label = label }
end

-- adopt gives a turn that made its session (turn.fresh) that session, sid:
-- its chat buffer becomes the session's, which becomes the current one,
-- and the commands waiting for a session get it.
function adopt(turn, sid, title)
  if not turn.fresh or not sid then
    return
  end
  turn.fresh = nil
  local temp, buf = turn.session, turn.buf
  turn.session = sid
  state.current = sid
  if vim.api.nvim_buf_is_valid(buf) then
    state.bufs[sid], state.bufs[temp] = buf, nil
    local old = vim.api.nvim_buf_get_name(buf)
    vim.api.nvim_buf_set_name(buf, "ctxls://chat/" .. sid:sub(1, 6))
    local alt = vim.fn.bufnr("^" .. vim.fn.escape(old, "\\.*[]~") .. "$")
    if alt ~= -1 and alt ~= buf then
      pcall(vim.api.nvim_buf_delete, alt, { force = true }) -- :file's copy under the old name
    end
    vim.api.nvim_buf_set_var(buf, "ctxls_session", sid)
  end
  state.questions[sid], state.questions[temp] = state.questions[temp], nil
  state.header[sid], state.header[temp] = state.header[temp], nil
  state.instructions[sid], state.instructions[temp] = state.instructions[temp], nil
  state.instructions_seq[sid], state.instructions_seq[temp] = state.instructions_seq[temp], nil
  state.titles[temp] = nil
  title = title or state.titles[sid] -- (a ctxls/sessionUpdated may have come first)
  if title then
    set_title(sid, title)
  end
  redraw_status()
  local waiting = state.creating or {}
  state.creating = nil
  for _, f in ipairs(waiting) do
    f(sid)
  end
end

-- unborn ends a turn that was to make its session and made none: the
-- commands waiting for a session make one.
function unborn(turn)
  if not turn.fresh then
    return
  end
  turn.fresh = nil
  local waiting = state.creating or {}
  state.creating = nil
  for _, f in ipairs(waiting) do
    with_session(f)
  end
end

-- learn asks the daemon which session a turn that made its session is in
-- (its current one, once the turn has begun).
function learn(turn)
  M.command(P.commands.session_show, vim.empty_dict(), function(r)
    if turn.fresh and r.session then
      adopt(turn, r.session.id, r.session.title)
    end
  end, function()
    if turn.done then
      unborn(turn) -- ended, and no session is current: none was made
    end
  end)
end

-- after_shown runs fn once session id's history, asked for by M.show, is
-- drawn (at once when none is on its way).
local function after_shown(id, fn)
  local pending = state.showing[id]
  if pending then
    table.insert(pending.waiting, fn)
  else
    fn()
  end
end

-- undo_turn runs ctxls.session.undo or .redo (defined with :CtxlsUndo).
local undo_turn

-- ask sends message as a turn of the current session (made when there is
-- none), with the file in front of you (M.turn_file). opts: range = {first,
-- last} (:'<,'>CtxlsAsk), bang (:CtxlsAsk!: without the file), on_refused
-- (called with message when the daemon refused the turn); rewind = { id,
-- index }: asked again in place of that question (the user is offered
-- the undo of the file changes of the turns taken back, undo_asked once
-- answered).
function M.ask(message, opts)
  opts = opts or {}
  local file = M.turn_file(opts)
  if not message or message == "" then
    local goes = {}
    if file then
      table.insert(goes, "with " .. file.label)
    end
    if #state.images > 0 then
      table.insert(goes, "with " .. images.label(state.images))
    end
    local with = #goes > 0 and (" (" .. table.concat(goes, ", ") .. ")") or ""
    vim.ui.input({ prompt = "Ask ctxls" .. with .. ": " }, function(input)
      if input and input ~= "" then
        M.ask(input, opts)
      end
    end)
    return
  end
  if (state.key_recheck or (state.key and state.key.err)) and not (state.turn or state.asking) then
    -- The last question was refused for want of a provider, or the key's
    -- command failed: the key may be there now (a password store filled
    -- or unlocked, setup() called again).
    state.key_recheck = nil
    renew_key()
  end
  local client = M.ensure_client()
  if not client then
    notify(state.missing or "the daemon is not running", vim.log.levels.ERROR)
    return
  end
  if state.turn or state.asking then
    notify("a turn is running; :CtxlsCancel stops it", vim.log.levels.WARN)
    return
  end
  history.add(message)
  -- Asked again: if the turns taken back changed files (the model's
  -- edit_file or create_file calls applied), offer to undo those changes
  -- too before the question goes (vim.ui.select, as :CtxlsDelete asks;
  -- no answer: not asked again).
  local rewound_buf = opts.rewind and state.current and state.bufs[state.current]
  local rewound_row = rewound_buf and vim.api.nvim_buf_is_valid(rewound_buf) and question_rows(rewound_buf)[opts.rewind.index]
  if rewound_row and not opts.undo_asked and tools.edited_from(rewound_buf, rewound_row) then
    local undo, keep = "Undo them too", "Keep them"
    vim.ui.select({ undo, keep }, { prompt = "Also undo the file changes of the turns taken back?" }, function(choice)
      if not choice then
        if opts.on_refused then
          opts.on_refused()
        end
        return
      end
      local again = vim.tbl_extend("force", opts, { undo_asked = true })
      if choice == keep then
        M.ask(message, again)
        return
      end
      -- Nothing left to undo (undone already: the message says so) does
      -- not stop the question.
      undo_turn("undo", { from = opts.rewind.id }, function(r, err)
        if r or error_kind(err) == P.error_kinds.invalid_argument then
          M.ask(message, again)
        elseif opts.on_refused then
          opts.on_refused()
        end
      end)
    end)
    return
  end
  state.asking = true -- until the turn is state.turn (the session may not exist yet)
  local from = vim.api.nvim_get_current_win()
  -- The attached images go with this question; back for the next one if
  -- it is refused (unless others were attached meanwhile).
  local attached = state.images
  state.images = {}
  redraw_status()
  local function give_back()
    if #attached > 0 and #state.images == 0 then
      state.images = attached
      redraw_status()
    end
  end
  local function start(id, fresh)
    state.asking = false
    state.seq = state.seq + 1
    local buf = chat_buffer(id)
    show_chat(buf)
    if not M.config.focus_chat and vim.api.nvim_win_is_valid(from) then
      vim.api.nvim_set_current_win(from) -- the cursor stays in the source
    end
    if opts.rewind then
      -- The question asked again and everything after it go; the turn
      -- asks in its place.
      local row = question_rows(buf)[opts.rewind.index]
      if row then
        tools.forget_from(buf, row)
        vim.api.nvim_buf_clear_namespace(buf, question_ns, row, -1)
        vim.api.nvim_buf_clear_namespace(buf, image_ns, row, -1)
        set_lines(buf, row, -1, {})
      end
      state.questions[id] = opts.rewind.index - 1
    end
    local goes = file and { file.label } or {}
    local client_root = client.config and client.config.root_dir or vim.loop.cwd()
    vim.list_extend(goes, mentions.mentioned(message, client_root, file and file.item:gsub(":[%d%-]+$", "")))
    local with = #goes > 0 and ("_with " .. table.concat(goes, ", ") .. "_\n\n") or ""
    local shown = {}
    state.image_paths[buf] = state.image_paths[buf] or {}
    for _, im in ipairs(attached) do
      table.insert(shown, images.line(im.name))
      state.image_paths[buf][im.name] = im.path
    end
    local pictured = #shown > 0 and ("\n\n" .. table.concat(shown, "\n")) or ""
    append_question(buf, with .. images.shown(message) .. pictured .. "\n\n## ctxls\n\n")
    state.questions[id] = (state.questions[id] or 0) + 1
    local turn = { token = "ctxls-nvim-" .. state.seq, buf = buf, session = id, fresh = fresh }
    turn.thinking = vim.api.nvim_buf_line_count(buf) - 1
    set_lines(buf, turn.thinking, turn.thinking + 1, { "_thinking…_" })
    set_lines(buf, turn.thinking + 1, turn.thinking + 1, { "" })
    follow(buf)
    state.turn = turn
    redraw_status()
    local params = { message = message, sessionId = not fresh and id or nil, workDoneToken = turn.token, files = file and { file.item } or nil, rewind = opts.rewind and opts.rewind.id or nil }
    if #attached > 0 then
      params.images = vim.tbl_map(function(im)
        return im.url
      end, attached)
    end
    local ok, rid = request(client, P.requests.chat, params, function(err, result)
      if result and result.sessionId then
        adopt(turn, result.sessionId)
      elseif err and turn.fresh and error_kind(err) ~= P.error_kinds.cancelled then
        unborn(turn) -- refused before a session was made
      end
      if result then
        set_instructions(turn.session, result.instructions) -- those the turn gave
      end
      if err then
        local kind = error_kind(err)
        if kind ~= P.error_kinds.cancelled then
          give_back()
        end
        local said, more = err.message or "", nil
        if kind == P.error_kinds.no_provider then
          turn.held = nil -- the daemon's words for it
          -- The daemon's words are for every client; these are Neovim's
          -- (firstrun.lua), in the chat whole, the notice one line.
          local words = firstrun.no_provider(M.config.provider, state.key, said)
          said, more = words.chat:gsub("^error: ", ""), words.more
          notify(words.notice, vim.log.levels.WARN)
          state.key_recheck = true
        elseif kind ~= P.error_kinds.cancelled then
          -- The turn never started (a turn of the session runs elsewhere,
          -- the store is down…): the question was not stored, and the
          -- chat may be drawn again from the store.
          state.questions[id] = math.max((state.questions[id] or 1) - 1, 0)
          notify(err.message or vim.inspect(err), vim.log.levels.WARN)
          if opts.on_refused then
            opts.on_refused(message)
          end
        end
        finish(turn, kind == P.error_kinds.cancelled and "cancelled" or ("error: " .. said), more)
      elseif result and result.finishReason == "error" then
        finish(turn, "the turn failed; see :messages")
      else
        finish(turn, "done")
      end
      settle(turn)
    end)
    if ok then
      turn.request_id = rid
    else
      give_back()
      unborn(turn)
      finish(turn, "error: the request could not be sent")
    end
  end
  if state.current or state.creating or state.resuming then
    with_session(function(id)
      after_shown(id, function()
        start(id, false)
      end)
    end)
  else
    -- The first question makes the session (with the view the editor
    -- rested on before it existed): its chat has a name of its own until
    -- the daemon says which session it is. Commands that need the
    -- session meanwhile wait for it.
    state.creating = {}
    start("new-" .. (state.seq + 1), true)
  end
end

-- The compose buffer (:CtxlsChat) ---------------------------------------------

-- compose: the buffer a question of several lines is written in (kept,
-- with its draft, while Neovim runs); compose_opts: the range (and !) given
-- to :CtxlsChat, for its next question only.
local compose, compose_opts = nil, {}

-- compose_status is the end of the compose window's status line (after
-- the keys): what goes with the question.
function M.compose_status()
  local file = M.turn_file(compose_opts)
  local s = file and ("with " .. file.label) or "no file goes"
  if #state.images > 0 then
    s = s .. " · with " .. images.label(state.images)
  end
  if compose_opts.rewind then
    s = string.format("asked again in place of question %d, whose turn and later ones go · ", compose_opts.rewind.index) .. s
  end
  return s
end

-- send_compose sends the compose buffer's text as a question and empties
-- it; while a turn runs the text stays and the user is told.
function M.send_compose()
  if not compose or not vim.api.nvim_buf_is_valid(compose) then
    return
  end
  local message = vim.trim(table.concat(vim.api.nvim_buf_get_lines(compose, 0, -1, false), "\n"))
  if message == "" then
    notify("write the question first; Ctrl-S sends it", vim.log.levels.WARN)
    return
  end
  if state.turn or state.asking then
    notify("a turn is running: the question is kept; :CtxlsCancel stops the turn", vim.log.levels.WARN)
    return
  end
  local opts = compose_opts
  compose_opts = {}
  vim.api.nvim_buf_set_lines(compose, 0, -1, false, {})
  opts.on_refused = function()
    -- Not asked: the question goes back to the compose window, unless
    -- another is being written there.
    if vim.api.nvim_buf_is_valid(compose) and vim.trim(table.concat(vim.api.nvim_buf_get_lines(compose, 0, -1, false), "")) == "" then
      vim.api.nvim_buf_set_lines(compose, 0, -1, false, vim.split(message, "\n", { plain = true }))
    end
  end
  M.ask(message, opts)
end

-- chat opens the compose window under the session's chat (the cursor in
-- it, in Insert mode): Enter inserts a new line, Ctrl-S (or Enter in
-- Normal mode) sends. opts as M.ask's, for the first question sent; with
-- text, the window holds it (a question to edit).
function M.chat(opts, text)
  compose_opts = opts or {}
  if not compose or not vim.api.nvim_buf_is_valid(compose) then
    compose = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(compose, "ctxls://compose")
    vim.api.nvim_buf_set_option(compose, "bufhidden", "hide")
    vim.api.nvim_buf_set_option(compose, "filetype", "markdown")
    local map = function(mode, lhs)
      vim.api.nvim_buf_set_keymap(compose, mode, lhs, "", {
        noremap = true,
        nowait = true,
        desc = "ctxls: send the question",
        callback = M.send_compose,
      })
    end
    map("i", "<C-s>")
    map("n", "<C-s>")
    map("n", "<CR>")
    history.attach(compose)
    mentions.attach(compose)
  end
  local win = vim.fn.bufwinid(compose)
  if win == -1 then
    local from = vim.api.nvim_get_current_win()
    local chat = nil
    if state.current then
      chat = show_chat(chat_buffer(state.current))
    end
    vim.api.nvim_set_current_win(chat or from)
    vim.cmd("belowright 6split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, compose)
    vim.api.nvim_win_set_option(win, "winfixheight", true)
    vim.api.nvim_win_set_option(win, "wrap", true)
    vim.api.nvim_win_set_option(win, "linebreak", true)
    -- A narrow window cuts the keys, not what goes.
    vim.api.nvim_win_set_option(win, "statusline", " ctxls · %<Ctrl-S sends · Enter: new line · %{v:lua.require'ctxls'.compose_status()}")
  end
  if text then
    vim.api.nvim_buf_set_lines(compose, 0, -1, false, vim.split(text, "\n", { plain = true }))
  end
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(compose), 0 })
  vim.cmd("startinsert!")
end

-- Asking again ----------------------------------------------------------------

-- with_questions calls cb(id, buf, questions) with the current session's
-- stored questions (user messages, oldest first) once its chat shows
-- them, one "## You" line each; it says why not when it cannot.
local function with_questions(cb)
  local id = state.current
  local here = vim.api.nvim_get_current_buf()
  local ok, shown_id = pcall(vim.api.nvim_buf_get_var, here, "ctxls_session")
  if ok and shown_id ~= id then
    notify("this chat is not the current session's: resume it first (:CtxlsSessions)", vim.log.levels.WARN)
    return
  end
  if not id then
    notify("no current session", vim.log.levels.WARN)
    return
  end
  if state.turn or state.asking then
    notify("a turn is running; :CtxlsCancel stops it", vim.log.levels.WARN)
    return
  end
  M.command(P.commands.session_show, { sessionId = id }, function(r)
    local qs = {}
    for _, m in ipairs(r.messages or {}) do
      if m.role == "user" then
        table.insert(qs, m)
      end
    end
    if #qs == 0 then
      notify("nothing was asked in this session yet", vim.log.levels.WARN)
      return
    end
    local buf = state.bufs[id]
    if not buf or not vim.api.nvim_buf_is_valid(buf) or #question_rows(buf) ~= #qs then
      buf = render_history(r.session, r.messages) -- the chat was not up to date
    end
    cb(id, buf, qs)
  end)
end

-- retry asks the current session's last question again in its place: its
-- answer (failed, cancelled, or one to regenerate) is replaced.
function M.retry()
  with_questions(function(_, buf, qs)
    show_chat(buf)
    M.ask(qs[#qs].content, { rewind = { id = qs[#qs].id, index = #qs } })
  end)
end

-- edit opens the compose window holding a question of the current session
-- (the one the cursor is in, in its chat; else the last one): sent, it is
-- asked in its place, and the turns after it go.
function M.edit()
  local here, row = vim.api.nvim_get_current_buf(), vim.api.nvim_win_get_cursor(0)[1] - 1
  with_questions(function(_, buf, qs)
    local index = #qs
    if here == buf then
      index = 1
      for i, r in ipairs(question_rows(buf)) do
        if r <= row then
          index = i
        end
      end
    end
    M.chat({ rewind = { id = qs[index].id, index = index } }, qs[index].content)
  end)
end

-- Images ----------------------------------------------------------------------

-- attach_image adds the image file at path to the next question; with
-- bang it takes that one back (every one without a path). Without either
-- it says which go.
function M.attach_image(path, bang)
  path = path and vim.trim(path) or ""
  if bang then
    if path == "" then
      state.images = {}
      notify("no image goes with the next question")
    else
      local full, keep = vim.fn.fnamemodify(vim.fn.expand(path), ":p"), {}
      for _, im in ipairs(state.images) do
        if im.path ~= full and im.name ~= path then
          table.insert(keep, im)
        end
      end
      if #keep == #state.images then
        notify(path .. " is not attached", vim.log.levels.WARN)
      end
      state.images = keep
    end
    redraw_status()
    return
  end
  if path == "" then
    if #state.images == 0 then
      notify("no image goes with the next question; :CtxlsAttach {file} attaches one")
    else
      notify("the next question goes with " .. images.label(state.images) .. " (:CtxlsAttach! takes them back)")
    end
    return
  end
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  for _, im in ipairs(state.images) do
    if im.path == full then
      notify(im.name .. " is attached already")
      return
    end
  end
  if #state.images >= images.max_images then
    notify(string.format("a question may carry %d images; :CtxlsAttach! {file} takes one back", images.max_images), vim.log.levels.WARN)
    return
  end
  local im, err = images.read(full)
  if not im then
    notify(err, vim.log.levels.ERROR)
    return
  end
  table.insert(state.images, im)
  redraw_status()
end

-- attached are the names of the images attached for the next question.
function M.attached()
  return vim.tbl_map(function(im)
    return im.name
  end, state.images)
end

-- open_image opens the image whose line the cursor is on in a chat: the
-- file it was read from when asked here, else its copy in the session
-- folder's sources/.
function M.open_image()
  local buf = vim.api.nvim_get_current_buf()
  local name = images.name_at(vim.fn.getline("."))
  if not name then
    return
  end
  local from = (state.image_paths[buf] or {})[name]
  if from and vim.loop.fs_stat(from) then
    return images.open(from, M.config)
  end
  local ok, id = pcall(vim.api.nvim_buf_get_var, buf, "ctxls_session")
  if not ok then
    return
  end
  M.command(P.commands.session_show, { sessionId = id }, function(r)
    local path = r.session.folder .. "/sources/" .. name
    if not vim.loop.fs_stat(path) then
      notify(name .. " is no longer in the session folder (" .. r.session.folder .. "/sources)", vim.log.levels.WARN)
      return
    end
    images.open(path, M.config)
  end)
end

-- open_match opens the file and line of the search result under the
-- cursor in a chat (grep's "path:LINE: text", a path find_files found).
function M.open_match()
  local file, lnum = tools.match_at(vim.api.nvim_get_current_buf(), vim.fn.line("."))
  if file then
    tools.open_match(file, lnum)
  end
end

-- quickfix puts a search's results into the quickfix list (|ctxls-search|):
-- in a chat, the search the cursor is on, else its last one; elsewhere the
-- current session's last one.
function M.quickfix()
  local buf = vim.api.nvim_get_current_buf()
  local p = is_chat(buf) and tools.call_at(buf, vim.fn.line(".")) or nil
  if not (p and search.is_search(p)) then
    if not is_chat(buf) then
      buf = state.current and state.bufs[state.current]
    end
    p = buf and vim.api.nvim_buf_is_valid(buf) and tools.last_search(buf) or nil
  end
  if not p then
    notify("no search of the model's in the chat to list")
    return false
  end
  return tools.quickfix(p)
end

function M.cancel()
  local turn, client = state.turn, M.client()
  if not turn or not client then
    notify("no turn is running")
    return
  end
  client_notify(client, "window/workDoneProgress/cancel", { token = turn.token })
end

-- file_path is the file a command acts on: the one named, else the current
-- buffer's, else (from the chat or another special buffer) the last file.
local function file_path(file)
  if file and file ~= "" then
    return vim.fn.fnamemodify(file, ":p")
  end
  local buf = vim.api.nvim_get_current_buf()
  if not attachable(buf) then
    buf = state.last_file
  end
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return nil
  end
  return vim.api.nvim_buf_get_name(buf)
end

function M.add(file)
  local path = file_path(file)
  if not path then
    notify("no file to add: open one, or :CtxlsAdd {file}", vim.log.levels.WARN)
    return
  end
  with_session(function(id)
    M.command(P.commands.context_set, { sessionId = id, setName = "files", items = { path }, mode = "merge" })
  end)
end

function M.drop(file)
  local path = file_path(file)
  M.command(P.commands.context_get, { setName = "files" }, function(r)
    local keep = {}
    for _, f in ipairs((r.context or {}).files or {}) do
      if f ~= path then
        table.insert(keep, f)
      end
    end
    M.command(P.commands.context_set, { setName = "files", items = keep, mode = "replace" })
  end)
end

-- scratch shows lines in a new read-only markdown window, named name if
-- given: a buffer shown before by that name (the same preview asked twice)
-- goes.
local function scratch(lines, name)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  if name then
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if b ~= buf and vim.api.nvim_buf_get_name(b) == name then
        vim.api.nvim_buf_delete(b, { force = true })
      end
    end
    vim.api.nvim_buf_set_name(buf, name)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
  vim.api.nvim_buf_set_option(buf, "filetype", "markdown")
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
end

-- setup_view (:CtxlsSetup) shows what is set for the provider (setup(),
-- the environment), then what the daemon makes of it (ctxls.models.list:
-- the server's models, or why it has no usable provider), then what to
-- set: firstrun.report.
function M.setup_view()
  local lines = firstrun.report(M.config.provider, state.key, nil)
  scratch(lines, "ctxls://setup")
  local buf = vim.api.nvim_get_current_buf()
  pcall(vim.cmd, "resize " .. math.min(#lines + 1, math.max(vim.o.lines - 10, 5))) -- all of it
  local function show(answer)
    if vim.api.nvim_buf_is_valid(buf) then
      set_lines(buf, 0, -1, firstrun.report(M.config.provider, state.key, answer))
    end
  end
  if state.key_recheck then
    state.key_recheck = nil
    renew_key()
  end
  if not M.ensure_client() then
    show({ err = { message = state.missing or "the daemon is not running" } })
    return
  end
  M.command(P.commands.models_list, { sessionId = state.current }, function(r)
    show({ result = r })
  end, function(err)
    show({ err = err })
  end)
end

function M.show_context()
  M.command(P.commands.context_get, {}, function(r)
    local lines = { "# ctxls session context", "" }
    local names = vim.tbl_keys(r.context or {})
    table.sort(names)
    for _, name in ipairs(names) do
      table.insert(lines, name .. ":")
      for _, item in ipairs(r.context[name]) do
        table.insert(lines, "  " .. item)
      end
    end
    if #names == 0 then
      table.insert(lines, "(no context yet: :CtxlsAdd adds the current file)")
    end
    -- The project's instructions files a question would give the model.
    if r.instructions and #r.instructions > 0 then
      table.insert(lines, "")
      table.insert(lines, "instructions:")
      for _, f in ipairs(r.instructions) do
        local note = ""
        if f.cut and f.cut ~= "" then
          note = string.format("  (%s of %s bytes given%s)", thousands(f.bytes), thousands(f.size), f.unsaved and "; unsaved" or "")
        elseif f.unsaved then
          note = "  (unsaved)"
        end
        table.insert(lines, "  " .. f.path .. note)
      end
    end
    local id = state.current
    if id and state.bufs[id] then
      set_instructions(id, r.instructions) -- the chat's line as current
    end
    scratch(lines)
  end)
end

-- show renders a session's history in its chat buffer (default: current).
function M.show(id)
  if (not id or id == "") and not state.current then
    notify("no current session: :CtxlsSessions picks one")
    return
  end
  id = (id and id ~= "") and id or state.current
  -- A question asked before the history arrives waits for it (see
  -- after_shown): drawn later, the history would wipe its turn.
  local pending = state.showing[id] or { n = 0, waiting = {} }
  state.showing[id] = pending
  pending.n = pending.n + 1
  local function done()
    pending.n = pending.n - 1
    if pending.n == 0 then
      state.showing[id] = nil
      for _, fn in ipairs(pending.waiting) do
        fn()
      end
    end
  end
  M.command(P.commands.session_show, { sessionId = id }, function(r)
    local ok, err = pcall(function()
      show_chat(render_history(r.session, r.messages))
    end)
    done()
    if not ok then
      error(err, 0)
    end
  end, function(err)
    done()
    notify(P.commands.session_show .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end)
end


-- resume makes session id the current one and shows it. Commands run
-- before its answer is back (:CtxlsAsk right after the picker closes; the
-- daemon's "resumed context" notice comes before the answer) wait for it,
-- as for a session being made (with_session), then for its history.
local function resume(id)
  local waiting = state.resuming or { n = 0 }
  state.resuming = waiting
  waiting.n = waiting.n + 1
  local function release() -- once the last resume asked for is back
    waiting.n = waiting.n - 1
    if waiting.n > 0 then
      return
    end
    state.resuming = nil
    for _, f in ipairs(waiting) do
      with_session(f)
    end
  end
  M.command(P.commands.session_resume, { sessionId = id }, function(r)
    state.current = r.session.id
    M.show(r.session.id)
    release()
  end, function(err)
    notify(P.commands.session_resume .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    release()
  end)
end

-- ago says how long ago an RFC 3339 time was: "just now", "5 min ago",
-- "3 h ago", "2 days ago", else its date.
function M.ago(iso, now)
  local y, mo, d, h, mi, sec = tostring(iso or ""):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return ""
  end
  local off = 0
  local sign, oh, om = tostring(iso):match("([+-])(%d%d):(%d%d)$")
  if sign then
    off = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "+" and 1 or -1)
  end
  -- os.time reads a table as local time: the difference to UTC corrects it.
  now = now or os.time()
  local utc_now = os.time(os.date("!*t", now))
  local t = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(sec), isdst = false })
  local secs = utc_now - (t - off)
  if secs < 60 then
    return "just now"
  elseif secs < 3600 then
    return string.format("%d min ago", math.floor(secs / 60))
  elseif secs < 86400 then
    return string.format("%d h ago", math.floor(secs / 3600))
  elseif secs < 7 * 86400 then
    local days = math.floor(secs / 86400)
    return days == 1 and "yesterday" or string.format("%d days ago", days)
  end
  return string.format("%s-%s-%s", y, mo, d)
end

-- session_item is a session in a picker: its title, its first question
-- when that says more (two sessions of one title differ there), how many
-- questions and how long ago.
function M.session_item(s)
  local first = vim.trim(s.firstQuestion or "")
  local title = s.title or ""
  local head = title
  if first ~= "" and first ~= title and first:sub(1, #title) ~= title then
    head = title .. " — " .. first
  end
  local n = s.questions or 0
  return string.format("%s  (%d %s, %s)", head, n, n == 1 and "question" or "questions", M.ago(s.updatedAt))
end

local function pick_session(prompt, cb)
  M.command(P.commands.session_list, { limit = 100 }, function(r)
    local sessions = r.sessions or {}
    if #sessions == 0 then
      notify("no sessions yet")
      return
    end
    vim.ui.select(sessions, {
      prompt = prompt,
      format_item = M.session_item,
    }, function(choice)
      if choice then
        cb(choice)
      end
    end)
  end)
end

function M.sessions()
  pick_session("Resume session", function(s)
    resume(s.id)
  end)
end

-- search finds sessions by their messages' text; the hit picked is resumed.
function M.search(query)
  if not query or query == "" then
    vim.ui.input({ prompt = "Search sessions: " }, function(q)
      if q and q ~= "" then
        M.search(q)
      end
    end)
    return
  end
  M.command(P.commands.session_search, { query = query, limit = 50 }, function(r)
    local hits = r.hits or {}
    if #hits == 0 then
      notify("no session mentions " .. query)
      return
    end
    vim.ui.select(hits, {
      prompt = "Resume session",
      format_item = function(h)
        return string.format("%s — %s", h.title, (h.snippet or ""):gsub("%s+", " "))
      end,
    }, function(h)
      if h then
        resume(h.sessionId)
      end
    end)
  end)
end

function M.new_session()
  M.command(P.commands.session_new, {}, function(r)
    state.current = r.session.id
    set_title(r.session.id, r.session.title)
    show_chat(chat_buffer(r.session.id))
    header_from(r.session) -- its model: the default model when one is set
    notify("new session")
  end)
end

function M.rename(title)
  local function go(t)
    if t and t ~= "" then
      M.command(P.commands.session_rename, { title = t })
    end
  end
  if title and title ~= "" then
    go(title)
  else
    vim.ui.input({ prompt = "New title: " }, go)
  end
end

function M.regenerate_title()
  if not state.current then
    notify("no current session")
    return
  end
  notify("asking the model for a title…")
  M.command(P.commands.session_regenerate_title, { sessionId = state.current }, function(r)
    set_title(r.session.id, r.session.title)
    notify("title: " .. r.session.title)
  end)
end

function M.compact()
  if not state.current then
    notify("no current session")
    return
  end
  if state.turn then
    notify("a turn is running; compact the session when it has ended")
    return
  end
  notify("summarising the session's earlier turns for the model…")
  M.command(P.commands.session_compact, { sessionId = state.current }, function(r)
    notify(string.format("%s are summarised for the model; every message is kept", first_questions(r.summary.summaryOf.questions or 0)))
    M.show(r.sessionId)
  end, function(err)
    -- Nothing to compact is an invalid argument: said, not an error.
    local msg = tostring(err.message or err):gsub("^invalid argument: ", "")
    notify(msg, error_kind(err) == P.error_kinds.invalid_argument and vim.log.levels.INFO or vim.log.levels.ERROR)
  end)
end

function M.delete()
  pick_session("Delete session", function(s)
    vim.ui.select({ "Delete", "Keep" }, { prompt = string.format('Delete "%s" with its messages and files?', s.title) }, function(choice)
      if choice ~= "Delete" then
        return
      end
      M.command(P.commands.session_delete, { sessionId = s.id }, function()
        local buf = state.bufs[s.id]
        state.bufs[s.id], state.shown[s.id], state.questions[s.id], state.header[s.id] = nil, nil, nil, nil
        state.instructions[s.id], state.instructions_seq[s.id] = nil, nil
        local function drop()
          if buf and vim.api.nvim_buf_is_valid(buf) then
            pcall(vim.api.nvim_buf_delete, buf, { force = true })
          end
        end
        notify("deleted " .. s.title)
        if state.current ~= s.id then
          drop()
          return
        end
        -- The current session went: the most recent remaining one is
        -- resumed, in the deleted one's chat window.
        state.current = nil
        redraw_status()
        M.command(P.commands.session_list, { limit = 1 }, function(r)
          local recent = (r.sessions or {})[1]
          if not recent then
            drop()
            return
          end
          M.command(P.commands.session_resume, { sessionId = recent.id }, function(rr)
            state.current = rr.session.id
            M.command(P.commands.session_show, { sessionId = rr.session.id }, function(sh)
              show_chat(render_history(sh.session, sh.messages))
              drop()
              notify("deleted " .. s.title .. "; resumed " .. rr.session.title)
            end)
          end)
        end)
      end)
    end)
  end)
end

-- model is the model of session id's turns (default: the current
-- session's) as its chat's header says it.
function M.model(id)
  id = id or state.current
  local h = id and state.header[id] or {}
  if h.chosen and h.chosen ~= "" then
    return h.chosen
  end
  local configured = type(M.config.provider) == "table" and M.config.provider.model or nil
  return configured or state.default_model or h.last or ""
end

-- The answers to :CtxlsModel's second question: for whom the model picked
-- is.
local model_scopes = { this = "This session", new = "This session and new ones" }

-- set_model sets the model of the current session's turns (made when there
-- is none); "" goes back to the provider's default. With model nil, the
-- provider's models (ctxls.models.list) are offered with vim.ui.select,
-- with an entry to type a name; then a second vim.ui.select asks whether
-- the model is for this session only or new sessions too (the daemon's
-- default model, kept in its data directory: ctxls.session.setModel with
-- default). A second question rather than a bang: :CtxlsModel! already
-- goes back to the provider's default, and the picker is where the user
-- decides anyway.
function M.set_model(model)
  local function set(name, default)
    with_session(function(id)
      M.command(P.commands.session_set_model, { sessionId = id, model = name, default = default or nil }, function(r)
        local chosen = (r.session.meta or {}).model or ""
        state.model_at[id] = stamp(r.session.updatedAt)
        local h = state.header[id] or {}
        h.chosen = chosen
        state.header[id] = h
        if default then
          state.default_model = name
        end
        set_header(id)
        redraw_status()
        local what = chosen ~= "" and chosen or "the provider's default model"
        notify((default and "this session and new ones use " or "this session's turns use ") .. what)
      end)
    end)
  end
  local function scoped(name)
    vim.ui.select({ model_scopes.this, model_scopes.new }, { prompt = "Use " .. name .. " for" }, function(scope)
      if scope == model_scopes.this or scope == model_scopes.new then
        set(name, scope == model_scopes.new)
      end
    end)
  end
  if model then
    set(model)
    return
  end
  local typed = "Type a model's name…"
  local function ask_name(prompt)
    vim.ui.input({ prompt = prompt }, function(name)
      if name and vim.trim(name) ~= "" then
        scoped(vim.trim(name))
      end
    end)
  end
  M.command(P.commands.models_list, { sessionId = state.current }, function(r)
    state.default_model = (r.default ~= "" and r.default) or state.default_model
    local items = vim.deepcopy(r.models or {})
    if r.current and r.current ~= "" and not vim.tbl_contains(items, r.current) then
      table.insert(items, 1, r.current)
    end
    table.insert(items, typed)
    vim.ui.select(items, {
      prompt = "Model for this session's turns (now " .. (r.current ~= "" and r.current or "the provider's default") .. ")",
      format_item = function(m)
        local notes = {}
        if m == r.current then
          table.insert(notes, "current")
        end
        if m == r.default then
          table.insert(notes, "the provider's default")
        end
        return #notes > 0 and (m .. "  (" .. table.concat(notes, ", ") .. ")") or m
      end,
    }, function(m)
      if m == typed then
        ask_name("Model: ")
      elseif m then
        scoped(m)
      end
    end)
  end, function(err)
    -- The provider lists no models (or cannot be reached): type one.
    -- (The prompt says so: it takes the notice's place on the command
    -- line.)
    notify("the provider listed no models (" .. tostring(err.message or err):gsub("\n", " ") .. "): type a model's name", vim.log.levels.WARN)
    ask_name("Model (the provider listed none): ")
  end)
end

-- summary shows, read-only, the newest summary the model is given of the
-- session's earlier turns (the session of the chat the cursor is in, else
-- the current one).
function M.summary()
  local ok, id = pcall(vim.api.nvim_buf_get_var, 0, "ctxls_session")
  id = ok and id or state.current
  if not id then
    notify("no current session")
    return
  end
  M.command(P.commands.session_show, { sessionId = id }, function(r)
    local text, span
    for _, m in ipairs(r.messages or {}) do
      if m.summaryOf then
        text, span = m.content, m.summaryOf
      end
    end
    if not text then
      notify("the session has not been summarised (:CtxlsCompact does it)")
      return
    end
    local lines = { string.format("# The summary the model is given of %s", first_questions(span.questions or 0)), "" }
    vim.list_extend(lines, vim.split(text, "\n", { plain = true }))
    local name = "ctxls://summary/" .. id:sub(1, 6)
    if vim.fn.bufnr(name) ~= -1 then
      pcall(vim.api.nvim_buf_delete, vim.fn.bufnr(name), { force = true }) -- shown again, as it is now
    end
    scratch(lines, name)
  end)
end

-- preview shows the model input of a turn (ctxls.chat.preview), read-only.
-- preview shows the model input message would be sent with, the file in
-- front of you (opts.range, opts.bang: as for :CtxlsAsk) included.
function M.preview(message, opts)
  opts = opts or {}
  -- Taken now: the prompt below may be answered elsewhere.
  local file = opts.file
  if file == nil then
    file = M.turn_file(opts) or false
  end
  if not message or message == "" then
    vim.ui.input({ prompt = "Preview the prompt for" .. (file and " (with " .. file.label .. ")" or "") .. ": " }, function(m)
      if m and m ~= "" then
        M.preview(m, { file = file })
      end
    end)
    return
  end
  local params = { message = message, sessionId = state.current, files = file and { file.item } or nil }
  M.command(P.commands.chat_preview, params, function(r)
    local t = r.tokens or {}
    local lines = {
      string.format("# Model input for %s (nothing sent)", r.model or "?"),
      string.format("Tokens: %d of %d — system %d (files %d), history %d", t.total or 0, r.budget or 0, t.system or 0, t.files or 0, t.history or 0),
    }
    -- Their text ends the system message below.
    local given = instructions_text(r.instructions)
    if given then
      table.insert(lines, "Instructions: " .. given)
    end
    for _, m in ipairs(r.messages or {}) do
      table.insert(lines, "")
      table.insert(lines, "## " .. m.role)
      table.insert(lines, "")
      vim.list_extend(lines, vim.split(m.content or "", "\n", { plain = true }))
    end
    local names = {}
    for _, tool in ipairs(r.tools or {}) do
      table.insert(names, tool.name)
    end
    vim.list_extend(lines, { "", "## tools", "", table.concat(names, ", ") })
    scratch(lines, "ctxls://preview/" .. state.seq)
  end)
end

-- export writes the current session as Markdown into its folder (the
-- daemon's) and says where; given file, it writes the export there too
-- (an existing file only with bang): :CtxlsExport[!] [file].
function M.export(file, bang)
  if not state.current then
    notify("no current session to export: ask something first, or pick one with :CtxlsSessions", vim.log.levels.WARN)
    return
  end
  local to
  if file and file ~= "" then
    to = vim.fn.simplify(vim.fn.fnamemodify(vim.fn.expand(file), ":p"))
    if vim.fn.isdirectory(to) == 1 then
      notify(to .. " is a folder: give a file name", vim.log.levels.ERROR)
      return
    end
    if not bang and vim.loop.fs_stat(to) then
      notify(to .. " exists: :CtxlsExport! " .. vim.fn.fnamemodify(to, ":~:.") .. " overwrites it", vim.log.levels.ERROR)
      return
    end
  end
  M.command(P.commands.session_export, { sessionId = state.current, format = "markdown" }, function(r)
    if not to then
      notify("exported the session to " .. r.path .. " (:CtxlsExport {file} writes it where you say)")
      return
    end
    local f, err = io.open(to, "wb")
    if not f then
      notify("could not write " .. to .. ": " .. tostring(err), vim.log.levels.ERROR)
      return
    end
    f:write(r.content)
    f:close()
    notify("exported the session to " .. to)
  end)
end

-- The model's edits -----------------------------------------------------------

-- decide answers the edit shown for review: P.review_decision.accept,
-- accept_all or reject (:CtxlsAccept, :CtxlsAcceptAll, :CtxlsReject).
function M.decide(decision)
  review.decide_shown(decision)
end

-- open_review shows the oldest edit waiting for review (:CtxlsReview).
function M.open_review()
  review.open()
end

-- reviewing is the edit shown for review (ctxls/reviewEdit's params, or
-- nil), how many wait, and how many have been decided.
M.reviewing = review.state

local mode_words = {
  [P.review_mode.ask] = "each edit is shown as a diff for you to accept",
  [P.review_mode.auto] = "edits are applied at once (u undoes them)",
  [P.review_mode.off] = "the model cannot edit files",
}

-- review_mode sets how the session's edits are reviewed: ask, auto or off
-- (picked from a list when not given).
function M.review_mode(mode)
  if not mode or mode == "" then
    vim.ui.select({ P.review_mode.ask, P.review_mode.auto, P.review_mode.off }, {
      prompt = "Review the model's edits",
      format_item = function(m)
        return m .. ": " .. mode_words[m]
      end,
    }, function(m)
      if m then
        M.review_mode(m)
      end
    end)
    return
  end
  if not mode_words[mode] then
    notify("the review mode is ask, auto or off", vim.log.levels.WARN)
    return
  end
  with_session(function(id)
    M.command(P.commands.session_set_review_mode, { sessionId = id, mode = mode }, function()
      notify("review mode " .. mode .. ": " .. mode_words[mode])
    end)
  end)
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
undo_turn = function(which, arg, cb)
  local id = state.current
  if not id then
    notify("no current session", vim.log.levels.WARN)
    return
  end
  arg = vim.tbl_extend("force", { sessionId = id }, arg or {})
  local command = which == "undo" and P.commands.session_undo or P.commands.session_redo
  M.command(command, arg, function(r)
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
function M.undo()
  undo_turn("undo")
end

-- redo applies again the changes of the turn undone last (:CtxlsRedo).
function M.redo()
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
function M.apply_block(replace)
  local chat = vim.api.nvim_get_current_buf()
  if not is_chat(chat) then
    notify("put the cursor on a code block in a chat buffer first", vim.log.levels.WARN)
    return
  end
  local lines = edits.block_at(chat, vim.api.nvim_win_get_cursor(0)[1])
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

-- title is the current session's title.
function M.title()
  return state.current and state.titles[state.current] or ""
end

-- asking is the permission question a daemon too old for ctxls/question
-- has on screen (or nil), and how many it asked.
M.asking = tools.asking

-- questions are the daemon's open questions (ctxls/question params, oldest
-- first), how many were asked, and the closed ones' outcomes by id.
M.questions = questions_ui.state

-- answer is :CtxlsAnswer ACTION: the newest open question offering ACTION
-- gets it (allow, deny, always, trust, distrust).
M.answer = questions_ui.command
M.answer_complete = questions_ui.complete

-- busy reports whether a turn is running.
function M.busy()
  return state.turn ~= nil
end

-- statusline is a component for 'statusline': "ctxls: <title>", with
-- " [thinking…]" while a turn runs; "" when the daemon is not running.
--   set statusline+=%{v:lua.require'ctxls'.statusline()}
function M.statusline()
  if not M.client() then
    return ""
  end
  local s = "ctxls"
  if M.title() ~= "" then
    s = s .. ": " .. M.title()
  end
  if state.turn then
    s = s .. " [thinking…]"
  end
  return s
end

return M
