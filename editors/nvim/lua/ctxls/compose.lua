-- The compose window (:CtxlsChat), where a question of several lines is
-- written, and asking again: a question retried or edited in its place
-- (:CtxlsRetry, :CtxlsEdit).
local W = {}

local P = require("ctxls.protocol")
local images = require("ctxls.images")
local history = require("ctxls.history")
local mentions = require("ctxls.mentions")
local chat = require("ctxls.chat")
local S = require("ctxls.state")
local ctxls, state, notify = S.ctxls, S.state, S.notify
local chat_buffer, show_chat, question_rows, render_history = chat.chat_buffer, chat.show_chat, chat.question_rows, chat.render_history

-- The compose buffer (:CtxlsChat) ---------------------------------------------

-- compose: the buffer a question of several lines is written in (kept,
-- with its draft, while Neovim runs); compose_opts: the range (and !) given
-- to :CtxlsChat, for its next question only.
local compose, compose_opts = nil, {}

-- compose_status is the end of the compose window's status line (after
-- the keys): what goes with the question.
function W.compose_status()
  local file = ctxls.turn_file(compose_opts)
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
function W.send_compose()
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
  ctxls.ask(message, opts)
end

-- chat opens the compose window under the session's chat (the cursor in
-- it, in Insert mode): Enter inserts a new line, Ctrl-S (or Enter in
-- Normal mode) sends. opts as ctxls.ask's, for the first question sent; with
-- text, the window holds it (a question to edit).
function W.chat(opts, text)
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
        callback = ctxls.send_compose,
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
  ctxls.command(P.commands.session_show, { sessionId = id }, function(r)
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
function W.retry()
  with_questions(function(_, buf, qs)
    show_chat(buf)
    ctxls.ask(qs[#qs].content, { rewind = { id = qs[#qs].id, index = #qs } })
  end)
end

-- edit opens the compose window holding a question of the current session
-- (the one the cursor is in, in its chat; else the last one): sent, it is
-- asked in its place, and the turns after it go.
function W.edit()
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
    ctxls.chat({ rewind = { id = qs[index].id, index = index } }, qs[index].content)
  end)
end

return W
