-- ctxls for Neovim: a thin client over the ctxls daemon's LSP protocol.
-- Works on Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).
local M = {}

-- The protocol's names, generated from lsp/command (go test ./lsp/command -update).
local P = require("ctxls.protocol")

M.config = {
  cmd = { "ctxls", "serve" },
  provider = nil, -- { baseURL, model, apiKeyEnv, titleModel, contextWindow, maxOutputTokens }
  data_dir = nil,
  debounce = 50, -- ms between didChange notifications
}

local state = { client_id = nil, turn = nil, seq = 0, chat_buf = nil }

local function notify(msg, level)
  vim.notify("ctxls: " .. msg, level or vim.log.levels.INFO)
end

-- client:request changed from a function field to a method in 0.11.
local function request(client, method, params, handler)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, 0)
  end
  return client.request(method, params, handler, 0)
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

-- command runs a ctxls command with one object argument.
function M.command(id, arg, cb)
  local client = M.client()
  if not client then
    notify("the daemon is not running", vim.log.levels.ERROR)
    return
  end
  if arg == nil or next(arg) == nil then
    arg = vim.empty_dict() -- an empty Lua table would be sent as []
  end
  request(client, "workspace/executeCommand", { command = id, arguments = { arg } }, function(err, result)
    if err then
      notify(id .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if cb then
      cb(result)
    end
  end)
end

-- Chat buffer -------------------------------------------------------------

local function chat_buffer()
  if state.chat_buf and vim.api.nvim_buf_is_valid(state.chat_buf) then
    return state.chat_buf
  end
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(buf, "ctxls://chat")
  vim.api.nvim_buf_set_option(buf, "filetype", "markdown")
  vim.api.nvim_buf_set_option(buf, "bufhidden", "hide")
  state.chat_buf = buf
  return buf
end

local function show_chat(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  vim.cmd("botright vsplit")
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  return win
end

local function append(buf, text)
  local last = vim.api.nvim_buf_line_count(buf)
  local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
  local lines = vim.split(tail .. text, "\n", { plain = true })
  vim.api.nvim_buf_set_lines(buf, last - 1, last, false, lines)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
    end
  end
end

-- Handlers ----------------------------------------------------------------

local function on_progress(err, result, ctx, config)
  local turn = state.turn
  if turn and result and result.token == turn.token then
    local v = result.value or {}
    if v.delta then
      append(turn.buf, v.delta)
    elseif v.kind == "report" and v.message then
      notify(v.message)
    end
    return
  end
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

local handlers = {
  ["$/progress"] = on_progress,
  [P.notifications.context_changed] = function(_, p)
    local parts = {}
    for name, items in pairs(p.context or {}) do
      table.insert(parts, name .. ": " .. table.concat(items, ", "))
    end
    table.sort(parts)
    local head = p.reason == "resume" and "resumed context" or "context changed"
    local msg = head .. (#parts > 0 and ("\n" .. table.concat(parts, "\n")) or " (empty)")
    if p.missing and #p.missing > 0 then
      msg = msg .. "\nmissing: " .. table.concat(p.missing, ", ")
    end
    notify(msg)
  end,
  [P.notifications.session_updated] = function(_, p)
    state.title = p.title
    notify("session: " .. p.title)
  end,
  -- The default handler waits for a choice, which blocks a headless editor.
  ["window/showMessageRequest"] = function(_, p)
    notify(p.message or "", vim.log.levels.WARN)
    return vim.NIL
  end,
}

-- Starting and attaching ----------------------------------------------------

local function lsp_config()
  local init = { provider = M.config.provider, dataDir = M.config.data_dir }
  return {
    name = "ctxls",
    cmd = M.config.cmd,
    root_dir = vim.loop.cwd(),
    init_options = init,
    handlers = handlers,
    flags = { debounce_text_changes = M.config.debounce },
    settings = { ctxls = { provider = M.config.provider } },
  }
end

local function attachable(buf)
  return vim.api.nvim_buf_is_valid(buf)
    and vim.api.nvim_buf_get_option(buf, "buftype") == ""
    and vim.api.nvim_buf_get_name(buf) ~= ""
end

function M.attach(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  if not attachable(buf) then
    return
  end
  if vim.lsp.start then
    -- 0.8+: starts the client once (same name and root) and attaches buf.
    local id = vim.lsp.start(lsp_config(), { bufnr = buf })
    if id then
      state.client_id = id
    end
    return
  end
  -- 0.7
  if not M.client() then
    state.client_id = vim.lsp.start_client(lsp_config())
  end
  if state.client_id then
    vim.lsp.buf_attach_client(buf, state.client_id)
  end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local group = vim.api.nvim_create_augroup("ctxls", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    callback = function(a)
      M.attach(a.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

-- Commands ------------------------------------------------------------------

function M.ask(message)
  if not message or message == "" then
    vim.ui.input({ prompt = "Ask ctxls: " }, function(input)
      if input and input ~= "" then
        M.ask(input)
      end
    end)
    return
  end
  local client = M.client()
  if not client then
    notify("the daemon is not running", vim.log.levels.ERROR)
    return
  end
  if state.turn then
    notify("a turn is running; :CtxlsCancel stops it", vim.log.levels.WARN)
    return
  end
  state.seq = state.seq + 1
  local token = "ctxls-nvim-" .. state.seq
  local buf = chat_buffer()
  show_chat(buf)
  append(buf, (vim.api.nvim_buf_line_count(buf) > 1 and "\n\n" or "") .. "## You\n\n" .. message .. "\n\n## ctxls\n\n")
  state.turn = { token = token, buf = buf }
  local ok, id = request(client, P.requests.chat, { message = message, workDoneToken = token }, function(err, result)
    state.turn = nil
    if err then
      append(buf, "\n\n_" .. (err.code == -32800 and "cancelled" or ("error: " .. (err.message or ""))) .. "_")
      return
    end
    if result and result.finishReason == "error" then
      append(buf, "\n\n_the turn failed; see :messages_")
    end
  end)
  if ok then
    state.turn.request_id = id
  else
    state.turn = nil
  end
end

function M.cancel()
  local turn, client = state.turn, M.client()
  if not turn or not client then
    notify("no turn is running")
    return
  end
  client_notify(client, "window/workDoneProgress/cancel", { token = turn.token })
end

local function buffer_path(file)
  if file and file ~= "" then
    return vim.fn.fnamemodify(file, ":p")
  end
  return vim.api.nvim_buf_get_name(0)
end

function M.add(file)
  local path = buffer_path(file)
  M.command(P.commands.context_set, { setName = "files", items = { path }, mode = "merge" })
end

function M.drop(file)
  local path = buffer_path(file)
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
    vim.cmd("botright new")
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
    vim.api.nvim_buf_set_option(buf, "filetype", "markdown")
  end)
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
      format_item = function(s)
        return string.format("%s  (%s, %d messages)", s.title, (s.updatedAt or ""):sub(1, 16), s.messageCount or 0)
      end,
    }, function(choice)
      if choice then
        cb(choice)
      end
    end)
  end)
end

function M.sessions()
  pick_session("Resume session", function(s)
    M.command(P.commands.session_resume, { sessionId = s.id }, function(r)
      state.title = r.session.title
    end)
  end)
end

function M.new_session()
  M.command(P.commands.session_new, {}, function(r)
    state.title = r.session.title
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

function M.delete()
  pick_session("Delete session", function(s)
    M.command(P.commands.session_delete, { sessionId = s.id }, function()
      notify("deleted " .. s.title)
    end)
  end)
end

function M.export()
  M.command(P.commands.session_export, { format = "markdown" }, function(r)
    notify("exported to " .. r.path)
  end)
end

-- title is the current session's title, for statuslines.
function M.title()
  return state.title or ""
end

return M
