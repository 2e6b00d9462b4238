-- Sessions: the current one (made when a command needs one), a session's
-- history shown, resumed, picked, searched, renamed, compacted, deleted,
-- exported, its summary, and the model of its turns.
local sessions = {}

local P = require("ctxls.protocol")
local chat = require("ctxls.chat")
local S = require("ctxls.state")
local ctxls, state, notify, error_kind = S.ctxls, S.state, S.notify, S.error_kind
local set_title, set_header, header_from, stamp = chat.set_title, chat.set_header, chat.header_from, chat.stamp
local chat_buffer, show_chat, render_history = chat.chat_buffer, chat.show_chat, chat.render_history
local redraw_status, first_questions, scratch = chat.redraw_status, chat.first_questions, chat.scratch

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
  ctxls.command(P.commands.session_new, {}, function(r)
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

-- after_shown runs fn once session id's history, asked for by ctxls.show, is
-- drawn (at once when none is on its way).
local function after_shown(id, fn)
  local pending = state.showing[id]
  if pending then
    table.insert(pending.waiting, fn)
  else
    fn()
  end
end

-- show renders a session's history in its chat buffer (default: current).
function sessions.show(id)
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
  ctxls.command(P.commands.session_show, { sessionId = id }, function(r)
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
  ctxls.command(P.commands.session_resume, { sessionId = id }, function(r)
    state.current = r.session.id
    ctxls.show(r.session.id)
    release()
  end, function(err)
    notify(P.commands.session_resume .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    release()
  end)
end

-- ago says how long ago an RFC 3339 time was: "just now", "5 min ago",
-- "3 h ago", "2 days ago", else its date.
function sessions.ago(iso, now)
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
function sessions.session_item(s)
  local first = vim.trim(s.firstQuestion or "")
  local title = s.title or ""
  local head = title
  if first ~= "" and first ~= title and first:sub(1, #title) ~= title then
    head = title .. " — " .. first
  end
  local n = s.questions or 0
  return string.format("%s  (%d %s, %s)", head, n, n == 1 and "question" or "questions", ctxls.ago(s.updatedAt))
end

local function pick_session(prompt, cb)
  ctxls.command(P.commands.session_list, { limit = 100 }, function(r)
    local sessions = r.sessions or {}
    if #sessions == 0 then
      notify("no sessions yet")
      return
    end
    vim.ui.select(sessions, {
      prompt = prompt,
      format_item = ctxls.session_item,
    }, function(choice)
      if choice then
        cb(choice)
      end
    end)
  end)
end

function sessions.sessions()
  pick_session("Resume session", function(s)
    resume(s.id)
  end)
end

-- search finds sessions by their messages' text; the hit picked is resumed.
function sessions.search(query)
  if not query or query == "" then
    vim.ui.input({ prompt = "Search sessions: " }, function(q)
      if q and q ~= "" then
        ctxls.search(q)
      end
    end)
    return
  end
  ctxls.command(P.commands.session_search, { query = query, limit = 50 }, function(r)
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

function sessions.new_session()
  ctxls.command(P.commands.session_new, {}, function(r)
    state.current = r.session.id
    set_title(r.session.id, r.session.title)
    show_chat(chat_buffer(r.session.id))
    header_from(r.session) -- its model: the default model when one is set
    notify("new session")
  end)
end

function sessions.rename(title)
  local function go(t)
    if t and t ~= "" then
      ctxls.command(P.commands.session_rename, { title = t })
    end
  end
  if title and title ~= "" then
    go(title)
  else
    vim.ui.input({ prompt = "New title: " }, go)
  end
end

function sessions.regenerate_title()
  if not state.current then
    notify("no current session")
    return
  end
  notify("asking the model for a title…")
  ctxls.command(P.commands.session_regenerate_title, { sessionId = state.current }, function(r)
    set_title(r.session.id, r.session.title)
    notify("title: " .. r.session.title)
  end)
end

function sessions.compact()
  if not state.current then
    notify("no current session")
    return
  end
  if state.turn then
    notify("a turn is running; compact the session when it has ended")
    return
  end
  notify("summarising the session's earlier turns for the model…")
  ctxls.command(P.commands.session_compact, { sessionId = state.current }, function(r)
    notify(string.format("%s are summarised for the model; every message is kept", first_questions(r.summary.summaryOf.questions or 0)))
    ctxls.show(r.sessionId)
  end, function(err)
    -- Nothing to compact is an invalid argument: said, not an error.
    local msg = tostring(err.message or err):gsub("^invalid argument: ", "")
    notify(msg, error_kind(err) == P.error_kinds.invalid_argument and vim.log.levels.INFO or vim.log.levels.ERROR)
  end)
end

function sessions.delete()
  pick_session("Delete session", function(s)
    vim.ui.select({ "Delete", "Keep" }, { prompt = string.format('Delete "%s" with its messages and files?', s.title) }, function(choice)
      if choice ~= "Delete" then
        return
      end
      ctxls.command(P.commands.session_delete, { sessionId = s.id }, function()
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
        ctxls.command(P.commands.session_list, { limit = 1 }, function(r)
          local recent = (r.sessions or {})[1]
          if not recent then
            drop()
            return
          end
          ctxls.command(P.commands.session_resume, { sessionId = recent.id }, function(rr)
            state.current = rr.session.id
            ctxls.command(P.commands.session_show, { sessionId = rr.session.id }, function(sh)
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
function sessions.model(id)
  id = id or state.current
  local h = id and state.header[id] or {}
  if h.chosen and h.chosen ~= "" then
    return h.chosen
  end
  local configured = type(ctxls.config.provider) == "table" and ctxls.config.provider.model or nil
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
function sessions.set_model(model)
  local function set(name, default)
    with_session(function(id)
      ctxls.command(P.commands.session_set_model, { sessionId = id, model = name, default = default or nil }, function(r)
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
  ctxls.command(P.commands.models_list, { sessionId = state.current }, function(r)
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
function sessions.summary()
  local ok, id = pcall(vim.api.nvim_buf_get_var, 0, "ctxls_session")
  id = ok and id or state.current
  if not id then
    notify("no current session")
    return
  end
  ctxls.command(P.commands.session_show, { sessionId = id }, function(r)
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

-- export writes the current session as Markdown into its folder (the
-- daemon's) and says where; given file, it writes the export there too
-- (an existing file only with bang): :CtxlsExport[!] [file].
function sessions.export(file, bang)
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
  ctxls.command(P.commands.session_export, { sessionId = state.current, format = "markdown" }, function(r)
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

sessions.with_session = with_session
sessions.after_shown = after_shown

return sessions
