-- The connection to the daemon: starting it (its command, found where Go
-- installs it; the provider's key in its environment), the LSP client and
-- attaching buffers, requests and ctxls commands, the editor view it is told.
-- What the daemon sends is handled in ctxls.handlers.
local daemon = {}

-- The protocol's names, generated from package api (go test ./api -update).
local P = require("ctxls.protocol")
-- The provider's key from setup() (provider.api_key), for the daemon's
-- environment only.
local key = require("ctxls.key")
local S = require("ctxls.state")
local ctxls, state, notify = S.ctxls, S.state, S.notify

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

function daemon.client()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

-- command runs a ctxls command with one object argument; on_err (optional)
-- gets the error instead of the default notice.
function daemon.command(id, arg, cb, on_err)
  local client = ctxls.ensure_client()
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

-- Starting and attaching ----------------------------------------------------

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

-- is_chat reports whether buf is one of the plugin's own (ctxls://…),
-- which the daemon is never given.
local function is_chat(buf)
  return vim.api.nvim_buf_get_name(buf):find("^ctxls://") ~= nil
end

local function server_cmd()
  local cmd = vim.deepcopy(ctxls.config.cmd)
  if ctxls.config.log_file and not vim.tbl_contains(cmd, "--log-file") then
    vim.fn.mkdir(vim.fn.fnamemodify(ctxls.config.log_file, ":h"), "p")
    vim.list_extend(cmd, { "--log-file", ctxls.config.log_file })
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
function daemon.resolve_cmd()
  local cmd = resolved_cmd()
  return cmd, not cmd and state.missing_help or nil
end

-- settings are the daemon's settings it may be given while it runs
-- (workspace/didChangeConfiguration): at start, and when setup() is called
-- again.
local function settings()
  local s = P.settings
  return { ctxls = { [s.provider] = key.wire(ctxls.config.provider), [s.project_instructions] = ctxls.config.project_instructions ~= false } }
end

-- The key setup() gives (provider.api_key) -----------------------------------

-- key_spec is provider.api_key as setup() gives it, or nil.
local function key_spec()
  return type(ctxls.config.provider) == "table" and ctxls.config.provider.api_key or nil
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
  local spec, name = key_spec(), key.env_name(ctxls.config.provider)
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
    [o.provider] = key.wire(ctxls.config.provider),
    [o.data_dir] = ctxls.config.data_dir,
    [o.view_idle_ms] = ctxls.config.view_idle_ms,
    [o.compact_at] = ctxls.config.compact_at,
    [o.mcp_servers] = ctxls.config.mcp_servers,
    [o.allow_read_only_tools] = ctxls.config.allow_read_only_tools,
    [o.tool_permission_timeout_seconds] = ctxls.config.tool_permission_timeout_seconds,
    [o.project_instructions] = ctxls.config.project_instructions ~= false,
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
    handlers = require("ctxls.handlers"), -- (here, not above: it needs this module)
    flags = { debounce_text_changes = ctxls.config.debounce },
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
function daemon.ensure_client()
  local client = ctxls.client()
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
  return ctxls.client()
end

function daemon.attach(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  if not attachable(buf) then
    return
  end
  state.last_file = buf
  if not ctxls.client() and not resolved_cmd() then
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
  if not ctxls.client() then
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
  local client, id = ctxls.client(), state.client_id
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
      ctxls.attach(buf)
    end
  end
  ctxls.ensure_client()
end

-- renew_key looks the key up again (a question was refused for want of a
-- provider, or setup() gave another provider.api_key) and, when it is not
-- the one the running daemon has, starts the daemon again with it: the
-- user who has just set the key need not restart Neovim.
local function renew_key()
  local said = state.key and state.key.err
  state.key = nil
  local client = ctxls.client()
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
function daemon.view()
  local client, buf = ctxls.client(), vim.api.nvim_get_current_buf()
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

daemon.request = request
daemon.client_notify = client_notify
daemon.is_chat = is_chat
daemon.attachable = attachable
daemon.settings = settings
daemon.key_spec = key_spec
daemon.renew_key = renew_key

return daemon
