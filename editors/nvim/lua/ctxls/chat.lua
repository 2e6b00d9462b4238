-- The chat buffers, one per session: the header (the model, the usage, the
-- project's instructions files), the questions and answers written as they
-- stream, a session's stored messages drawn again (also when turns are made
-- elsewhere), and the status line.
local chat = {}

local P = require("ctxls.protocol")
-- The model's tool calls in the chat.
local tools = require("ctxls.tools")
-- Images that go with a question (:CtxlsAttach) and their lines in the chat.
local images = require("ctxls.images")
local S = require("ctxls.state")
local ctxls, state = S.ctxls, S.state

-- Chat buffers: one per session ----------------------------------------------

local function redraw()
  pcall(vim.cmd, "redraw")
end

local set_lines = require("ctxls.buf").set_lines

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
    local configured = type(ctxls.config.provider) == "table" and ctxls.config.provider.model or nil
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
  local client = ctxls.client()
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
  if not id or not ctxls.client() then
    return
  end
  state.instructions_asked = state.instructions_asked + 1
  local seq = state.instructions_asked
  state.instructions_seq[id] = seq
  local arg = id:find("^new%-") and {} or { sessionId = id }
  ctxls.command(P.commands.context_get, arg, function(r)
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
-- shows ctxls.statusline() is current in inactive windows too.
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
  local c = ctxls.client()
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
  if not buf or not vim.api.nvim_buf_is_valid(buf) or not ctxls.client() or running_in(id) then
    return
  end
  ctxls.command(P.commands.session_show, { sessionId = id }, function(r)
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
  ctxls.command(P.commands.session_show, { sessionId = id }, function(r)
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

-- Read-only windows ----------------------------------------------------------

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

-- The status line ---------------------------------------------------------------

-- title is the current session's title.
function chat.title()
  return state.current and state.titles[state.current] or ""
end

-- busy reports whether a turn is running.
function chat.busy()
  return state.turn ~= nil
end

-- statusline is a component for 'statusline': "ctxls: <title>", with
-- " [thinking…]" while a turn runs; "" when the daemon is not running.
--   set statusline+=%{v:lua.require'ctxls'.statusline()}
function chat.statusline()
  if not ctxls.client() then
    return ""
  end
  local s = "ctxls"
  if ctxls.title() ~= "" then
    s = s .. ": " .. ctxls.title()
  end
  if state.turn then
    s = s .. " [thinking…]"
  end
  return s
end

chat.redraw = redraw
chat.set_lines = set_lines
chat.thousands = thousands
chat.usage_text = usage_text
chat.add_usage = add_usage
chat.instructions_text = instructions_text
chat.set_header = set_header
chat.set_instructions = set_instructions
chat.refresh_instructions = refresh_instructions
chat.stamp = stamp
chat.header_from = header_from
chat.chat_buffer = chat_buffer
chat.show_chat = show_chat
chat.follow = follow
chat.append = append
chat.question_ns = question_ns
chat.image_ns = image_ns
chat.image_highlight = image_highlight
chat.append_question = append_question
chat.question_rows = question_rows
chat.redraw_status = redraw_status
chat.set_title = set_title
chat.first_questions = first_questions
chat.render_history = render_history
chat.refresh = refresh
chat.settle = settle
chat.scratch = scratch

return chat
