-- Turns: a question asked (:CtxlsAsk), with the file in front of you, the
-- images attached and the files mentioned; its answer streamed into the
-- chat ($/progress), its end, cancelling it, and the session a first
-- question makes.
local T = {}

local P = require("ctxls.protocol")
local tools = require("ctxls.tools")
-- The model's edits: reviewed in a diff tab, applied to the buffers.
local review = require("ctxls.review")
local edits = require("ctxls.edits")
local images = require("ctxls.images")
-- The questions sent, brought back in the compose window (Ctrl-P, Ctrl-N).
local history = require("ctxls.history")
-- @file mentions completed in the compose window.
local mentions = require("ctxls.mentions")
-- What to say when no provider is usable, and :CtxlsSetup.
local firstrun = require("ctxls.firstrun")
local daemon = require("ctxls.daemon")
local chat = require("ctxls.chat")
local sessions = require("ctxls.sessions")
local S = require("ctxls.state")
local ctxls, state, notify, error_kind = S.ctxls, S.state, S.notify, S.error_kind
local request, client_notify, attachable, renew_key = daemon.request, daemon.client_notify, daemon.attachable, daemon.renew_key
local redraw, set_lines, follow, append, append_question = chat.redraw, chat.set_lines, chat.follow, chat.append, chat.append_question
local chat_buffer, show_chat, question_rows, question_ns, image_ns = chat.chat_buffer, chat.show_chat, chat.question_rows, chat.question_ns, chat.image_ns
local usage_text, add_usage, set_header, set_instructions = chat.usage_text, chat.add_usage, chat.set_header, chat.set_instructions
local set_title, redraw_status, settle = chat.set_title, chat.redraw_status, chat.settle
local with_session, after_shown = sessions.with_session, sessions.after_shown

-- A turn that makes its session (the first question): see adopt below.
local adopt, unborn, learn

-- Turns ------------------------------------------------------------------------

-- finish ends the running turn once: from the progress end, the reply, or a
-- cancelled request whose reply Neovim 0.7 drops.
local function finish(turn, how, more)
  if turn.done then
    return
  end
  turn.done = true
  -- The daemon's errors held while the turn had not begun (see
  -- window/showMessage in ctxls.handlers): not the refusal its reply
  -- said already.
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
function T.turn_file(opts)
  opts = opts or {}
  if opts.bang or (not ctxls.config.send_active_file and not opts.range) then
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
  ctxls.command(P.commands.session_show, vim.empty_dict(), function(r)
    if turn.fresh and r.session then
      adopt(turn, r.session.id, r.session.title)
    end
  end, function()
    if turn.done then
      unborn(turn) -- ended, and no session is current: none was made
    end
  end)
end

-- undo_turn runs ctxls.session.undo or .redo (ctxls.edits, with :CtxlsUndo).
local undo_turn = edits.undo_turn

-- ask sends message as a turn of the current session (made when there is
-- none), with the file in front of you (ctxls.turn_file). opts: range =
-- {first, last} (:'<,'>CtxlsAsk), bang (:CtxlsAsk!: without the file), on_refused
-- (called with message when the daemon refused the turn); rewind = { id,
-- index }: asked again in place of that question (the user is offered
-- the undo of the file changes of the turns taken back, undo_asked once
-- answered).
function T.ask(message, opts)
  opts = opts or {}
  local file = ctxls.turn_file(opts)
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
        ctxls.ask(input, opts)
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
  local client = ctxls.ensure_client()
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
        ctxls.ask(message, again)
        return
      end
      -- Nothing left to undo (undone already: the message says so) does
      -- not stop the question.
      undo_turn("undo", { from = opts.rewind.id }, function(r, err)
        if r or error_kind(err) == P.error_kinds.invalid_argument then
          ctxls.ask(message, again)
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
    if not ctxls.config.focus_chat and vim.api.nvim_win_is_valid(from) then
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
          local words = firstrun.no_provider(ctxls.config.provider, state.key, said)
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

function T.cancel()
  local turn, client = state.turn, ctxls.client()
  if not turn or not client then
    notify("no turn is running")
    return
  end
  client_notify(client, "window/workDoneProgress/cancel", { token = turn.token })
end

T.tell = tell
T.on_progress = on_progress
T.adopt = adopt

return T
