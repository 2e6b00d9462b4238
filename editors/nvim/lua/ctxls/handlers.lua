-- What the daemon sends: the LSP handlers of its notifications and server
-- requests (a turn's progress, tool calls, context and session changes,
-- its messages, questions, edits to review or apply, the diagnostics it
-- asks for), given to the client by ctxls.daemon; and the chat hooks of the
-- questions and reviews. This module returns the handlers table.
local P = require("ctxls.protocol")
-- The model's tool calls in the chat.
local tools = require("ctxls.tools")
-- The daemon's questions (tool permission, workspace trust) in the chat.
local questions_ui = require("ctxls.questions")
-- The model's edits: reviewed in a diff tab, applied to the buffers.
local review = require("ctxls.review")
local edits = require("ctxls.edits")
-- The editor's diagnostics for the model's diagnostics tool.
local diagnostics = require("ctxls.diagnostics")
local chat = require("ctxls.chat")
local T = require("ctxls.turn")
local context = require("ctxls.context")
local S = require("ctxls.state")
local ctxls, state, notify = S.ctxls, S.state, S.notify
local set_lines, follow, append, set_title = chat.set_lines, chat.follow, chat.append, chat.set_title
local refresh, refresh_instructions = chat.refresh, chat.refresh_instructions
local on_progress, tell, adopt = T.on_progress, T.tell, T.adopt
local context_line = context.context_line

-- permission_timeout is how long the daemon waits for a permission answer.
local function permission_timeout()
  local s = ctxls.config.tool_permission_timeout_seconds
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
      ctxls.attach(buf)
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
    ctxls.command(P.commands.question_answer, { id = id, action = action }, nil, on_err)
  end,
})

return handlers
