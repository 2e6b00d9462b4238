-- Questions in the chat (:help ctxls-questions): the daemon's ctxls/question
-- (may the model call a tool, trust a workspace's .mcp.json) shown as lines
-- in the session's chat buffer, answered with keys mapped in that buffer
-- only or :CtxlsAnswer, and closed on ctxls/questionClosed. Nothing here
-- takes focus or waits for a key: typing in another buffer never answers.
local P = require("ctxls.protocol")

local Q = {}

local ns = vim.api.nvim_create_namespace("ctxls_questions_asked") -- one extmark per question, on its first line

vim.cmd([[
  highlight default link CtxlsQuestion WarningMsg
  highlight default link CtxlsQuestionKeys Special
  highlight default link CtxlsQuestionClosed Comment
]])

-- The key of each action in the chat buffer. A deliberate action's key is
-- upper case and must be pressed twice (the first asks to confirm).
local keys = { allow = "a", deny = "d", always = "A", trust = "T", distrust = "n", accept = "a", reject = "r", acceptAll = "A" }

-- What a closed question's line says of its outcome.
local outcomes = {
  allow = "allowed once",
  deny = "denied",
  always = "always allowed in this session",
  trust = "trusted",
  distrust = "not trusted",
  accept = "accepted",
  reject = "rejected",
  acceptAll = "accepted with the rest of the turn's edits",
  timeout = "no answer in time",
  cancelled = "cancelled with its turn",
}

-- open[id] = { p = the question's params, buf = its chat buffer (or nil),
-- mark = its extmark, confirm = the deliberate action waiting for its
-- second key }; order: the ids in the order asked.
local open, order = {}, {}
-- asked counts the questions shown; closed[id] is a closed one's outcome.
local asked, closed = 0, {}
-- mapped[buf] = the keys mapped in buf.
local mapped = {}

-- env is what ctxls.handlers gives: buf_for(params) → the chat buffer or nil,
-- follow(buf), notify(msg, level) (it adds "ctxls: "), answer(id, action,
-- on_err), timeout() → the daemon's wait in seconds.
local env

function Q.setup(e)
  env = e
end

local set_lines = require("ctxls.buf").set_lines

local function message(p)
  return ((p.message or ""):gsub("^ctxls: ", ""):gsub("%s*\n%s*", " "))
end

-- key_line says the question's keys (or, while a deliberate action waits
-- for its confirmation, how to give it).
local function key_line(q)
  if q.confirm then
    for _, a in ipairs(q.p.actions or {}) do
      if a.id == q.confirm then
        return string.format("> press %s again to confirm: %s (another answer key cancels; or :CtxlsAnswer %s)", keys[a.id], a.title:lower(), a.id)
      end
    end
  end
  local parts = {}
  for _, a in ipairs(q.p.actions or {}) do
    local k = keys[a.id]
    if k then
      table.insert(parts, string.format("[%s] %s", a.deliberate and (k .. k) or k, a.title:lower()))
    end
  end
  return "> " .. table.concat(parts, "  ") .. "  (or :CtxlsAnswer)"
end

local function lines_of(q)
  return { "> **ctxls asks:** " .. message(q.p), key_line(q) }
end

-- row is the question's first line in its buffer, or nil (not shown, or
-- the chat was drawn anew).
local function row(q)
  if not q.buf or not vim.api.nvim_buf_is_valid(q.buf) or not q.mark then
    return nil
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(q.buf, ns, q.mark, {})
  local r = pos[1]
  if not r then
    return nil
  end
  local first = vim.api.nvim_buf_get_lines(q.buf, r, r + 1, false)[1] or ""
  return first:find("^> %*%*ctxls asks:%*%*") and r or nil
end

local function highlight(q, r)
  vim.api.nvim_buf_add_highlight(q.buf, -1, "CtxlsQuestion", r, 0, -1)
  vim.api.nvim_buf_add_highlight(q.buf, -1, "CtxlsQuestionKeys", r + 1, 0, -1)
end

-- the open questions of buf, newest first.
local function open_in(buf)
  local out = {}
  for i = #order, 1, -1 do
    local q = open[order[i]]
    if q and q.buf == buf then
      table.insert(out, q)
    end
  end
  return out
end

-- remap maps in buf the keys its open questions offer, and unmaps the others.
local function remap(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    mapped[buf] = nil
    return
  end
  local want = {}
  for _, q in ipairs(open_in(buf)) do
    for _, a in ipairs(q.p.actions or {}) do
      if keys[a.id] then
        want[keys[a.id]] = true
      end
    end
  end
  for k in pairs(mapped[buf] or {}) do
    if not want[k] then
      pcall(vim.keymap.del, "n", k, { buffer = buf })
    end
  end
  for k in pairs(want) do
    if not (mapped[buf] or {})[k] then
      vim.keymap.set("n", k, function()
        Q.key(buf, k)
      end, { buffer = buf, nowait = true, desc = "ctxls: answer the question" })
    end
  end
  mapped[buf] = want
end

local function redraw_keys(q)
  local r = row(q)
  if r then
    set_lines(q.buf, r + 1, r + 2, { key_line(q) })
    highlight(q, r)
  end
end

-- ask shows a ctxls/question: two lines at the end of its chat buffer, the
-- keys mapped there, and one notification.
function Q.ask(p)
  if not p or not p.id or open[p.id] or closed[p.id] then
    return
  end
  asked = asked + 1
  local q = { p = p, buf = env.buf_for(p) }
  open[p.id] = q
  table.insert(order, p.id)
  if q.buf and vim.api.nvim_buf_is_valid(q.buf) then
    local buf = q.buf
    local last = vim.api.nvim_buf_line_count(buf)
    local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
    local before = last >= 2 and vim.api.nvim_buf_get_lines(buf, last - 2, last - 1, false)[1] or ""
    local lines, r = lines_of(q), nil
    if tail ~= "" then
      set_lines(buf, last, last, vim.list_extend({ "" }, vim.list_extend(lines, { "" })))
      r = last + 1
    elseif before == "" then
      set_lines(buf, last - 1, last, vim.list_extend(lines, { "" }))
      r = last - 1
    else
      set_lines(buf, last - 1, last, vim.list_extend({ "" }, vim.list_extend(lines, { "" })))
      r = last
    end
    q.mark = vim.api.nvim_buf_set_extmark(buf, ns, r, 0, { right_gravity = false })
    highlight(q, r)
    remap(buf)
    env.follow(buf)
  end
  local how = q.buf and "answer in the chat or with :CtxlsAnswer" or "answer with :CtxlsAnswer"
  env.notify(string.format("%s (%s)", message(p), how), vim.log.levels.WARN)
end

-- close shows a question's outcome (ctxls/questionClosed): its lines
-- become one that says it, and its keys go.
function Q.close(p)
  local q = p and open[p.id]
  if not q then
    return
  end
  open[p.id], closed[p.id] = nil, p.outcome
  for i, id in ipairs(order) do
    if id == p.id then
      table.remove(order, i)
      break
    end
  end
  local r = row(q)
  if r then
    local text = string.format("> _ctxls asked: %s → %s_", message(q.p), outcomes[p.outcome] or p.outcome)
    set_lines(q.buf, r, r + 2, { text })
    vim.api.nvim_buf_add_highlight(q.buf, -1, "CtxlsQuestionClosed", r, 0, -1)
    env.follow(q.buf)
  end
  if q.buf then
    remap(q.buf)
  end
  if p.outcome == "timeout" then
    local what = q.p.kind == "trust" and "it is asked again next time"
      or q.p.kind == "review" and "the question was not answered in time; the edit was not applied"
      or "the question was not answered in time; the call did not run"
    env.notify(string.format("no answer within %d s: %s", env.timeout(), what), vim.log.levels.WARN)
  end
end

-- answer sends the answer; the question closes when the daemon says so.
local function answer(q, action)
  q.confirm = nil
  env.answer(q.p.id, action, function(err)
    env.notify(tostring(err and err.message or err), vim.log.levels.WARN)
  end)
end

-- the question key k of buf answers: the one whose lines the cursor is on
-- in the current window, else the newest with an action of that key; and
-- that action.
local function target(buf, k)
  local cursor = vim.api.nvim_get_current_buf() == buf and vim.api.nvim_win_get_cursor(0)[1] - 1 or -1
  local offering = {}
  for _, q in ipairs(open_in(buf)) do
    for _, a in ipairs(q.p.actions or {}) do
      if keys[a.id] == k then
        table.insert(offering, { q = q, a = a })
        local r = row(q)
        if r and (cursor == r or cursor == r + 1) then
          return q, a
        end
      end
    end
  end
  if offering[1] then
    return offering[1].q, offering[1].a
  end
end

-- key is key k pressed in chat buffer buf (mapped there only while a
-- question offers it). A deliberate action asks for the key again.
function Q.key(buf, k)
  local q, a = target(buf, k)
  if not q then
    return
  end
  local action = a.id
  for _, other in ipairs(open_in(buf)) do
    if other ~= q and other.confirm then
      other.confirm = nil
      redraw_keys(other)
    end
  end
  if q.confirm and q.confirm ~= action then
    q.confirm = nil -- another key cancels the confirmation, and only that
    redraw_keys(q)
    return
  end
  if a.deliberate and q.confirm ~= action then
    q.confirm = action
    redraw_keys(q)
    -- Not confirmed within CONFIRM_MS: asked for again.
    local seq = (q.confirm_seq or 0) + 1
    q.confirm_seq = seq
    vim.defer_fn(function()
      if q.confirm == action and q.confirm_seq == seq and open[q.p.id] then
        q.confirm = nil
        redraw_keys(q)
      end
    end, Q.CONFIRM_MS)
    return
  end
  answer(q, action)
end

-- CONFIRM_MS is how long a deliberate action waits for its second key.
Q.CONFIRM_MS = 10000

-- command is :CtxlsAnswer ACTION: it answers the newest open question
-- that offers ACTION (a command is deliberate enough for any).
function Q.command(action)
  action = vim.trim(action or "")
  for i = #order, 1, -1 do
    local q = open[order[i]]
    for _, a in ipairs(q.p.actions or {}) do
      if a.id == action then
        answer(q, action)
        return
      end
    end
  end
  if #order == 0 then
    env.notify("no question is waiting for an answer", vim.log.levels.WARN)
  else
    env.notify(string.format("no open question offers %q; they offer: %s", action, table.concat(Q.complete(), ", ")), vim.log.levels.WARN)
  end
end

-- complete lists the actions the open questions offer.
function Q.complete()
  local seen, out = {}, {}
  for _, id in ipairs(order) do
    for _, a in ipairs(open[id].p.actions or {}) do
      if not seen[a.id] then
        seen[a.id] = true
        table.insert(out, a.id)
      end
    end
  end
  return out
end

-- state is for tests and statuslines: the open questions' params (oldest
-- first), how many were asked, and the outcomes of the closed ones by id.
function Q.state()
  local out = {}
  for _, id in ipairs(order) do
    table.insert(out, open[id].p)
  end
  return out, asked, closed
end

Q.keys = keys
Q.notifications = { question = P.notifications.question, closed = P.notifications.question_closed }

return Q
