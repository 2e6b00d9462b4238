-- The editor's diagnostics for the model (ctxls/diagnostics).
--
-- The daemon asks for them for the model's diagnostics tool (sent once
-- initializationOptions.diagnostics is set, as the plugin does). The answer
-- is what vim.diagnostic holds for the loaded buffers that visit files,
-- every namespace's (language servers, linters), as LSP Diagnostics:
-- Neovim's 0-based lines and byte columns made characters of the encoding
-- the daemon negotiated with the client (client.offset_encoding, as
-- ctxls.edits reads the daemon's positions). With waitMs the answer waits
-- for a DiagnosticChanged of a buffer asked about (any, without uris) and
-- settle_ms of rest after it, or waitMs (:help ctxls-diagnostics).
local G = {}

-- settle_ms is how long the diagnostics must rest after a change before
-- the answer to a waitMs goes.
local settle_ms = 300

local later = require("ctxls.later")
local uv = vim.uv or vim.loop

-- character is the LSP character of byte column col of line, counted in
-- encoding; past the line's end is its end.
local function character(line, col, encoding)
  if not line or encoding == "utf-8" then
    return col
  end
  col = math.min(col, #line)
  if vim.fn.has("nvim-0.11") == 1 then
    local ok, n = pcall(vim.str_utfindex, line, encoding, col, false)
    return ok and n or col
  end
  local ok, u32, u16 = pcall(vim.str_utfindex, line, col)
  if not ok then
    return col
  end
  return encoding == "utf-32" and u32 or u16
end

-- file_buf reports whether buf is a loaded buffer visiting a file.
local function file_buf(buf)
  return vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= ""
end

-- lsp_diagnostics are buf's diagnostics as LSP's, positions in encoding.
local function lsp_diagnostics(buf, encoding)
  local lines = {}
  local function line(n)
    if lines[n] == nil then
      lines[n] = vim.api.nvim_buf_get_lines(buf, n, n + 1, false)[1] or false
    end
    return lines[n] or nil
  end
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local end_lnum, end_col = d.end_lnum or d.lnum, d.end_col or d.col
    local lsp = {
      range = {
        start = { line = d.lnum, character = character(line(d.lnum), d.col, encoding) },
        ["end"] = { line = end_lnum, character = character(line(end_lnum), end_col, encoding) },
      },
      severity = d.severity, -- vim.diagnostic.severity's numbers are LSP's
      message = d.message or "",
      source = d.source,
    }
    local code = d.code
    if code == nil and type(d.user_data) == "table" and type(d.user_data.lsp) == "table" then
      code = d.user_data.lsp.code
    end
    if type(code) == "string" or type(code) == "number" then
      lsp.code = code
    end
    table.insert(out, lsp)
  end
  return out
end

-- path is a file name made absolute, for comparing the daemon's URIs with
-- the buffers' names.
local function path(name)
  return vim.fn.fnamemodify(name, ":p")
end

-- collect answers for the files the daemon named (uris), or for every
-- loaded file buffer that has diagnostics.
local function collect(uris, encoding)
  local out = {}
  if uris then
    local bufs = {}
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if file_buf(b) then
        bufs[path(vim.api.nvim_buf_get_name(b))] = b
      end
    end
    for _, u in ipairs(uris) do
      local ok, name = pcall(vim.uri_to_fname, u)
      local b = ok and bufs[path(name)]
      table.insert(out, { uri = u, diagnostics = b and lsp_diagnostics(b, encoding) or {} })
    end
    return out
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if file_buf(b) then
      local ds = lsp_diagnostics(b, encoding)
      if #ds > 0 then
        table.insert(out, { uri = vim.uri_from_bufnr(b), diagnostics = ds })
      end
    end
  end
  return out
end

-- request answers ctxls/diagnostics's params p for client; it is the
-- request handler's return value.
function G.request(p, client)
  p = type(p) == "table" and p or {}
  local uris = type(p.uris) == "table" and p.uris or nil
  local encoding = client and client.offset_encoding or "utf-16"
  local wait = type(p.waitMs) == "number" and p.waitMs > 0 and p.waitMs or 0
  local how, reply
  if wait > 0 then
    how, reply = later.later()
  end
  if not how then
    return collect(uris, encoding)
  end
  local names
  if uris then
    names = {}
    for _, u in ipairs(uris) do
      local ok, name = pcall(vim.uri_to_fname, u)
      if ok then
        names[path(name)] = true
      end
    end
  end
  local timer, quiet, autocmd = uv.new_timer(), uv.new_timer(), nil
  local done = false
  local function finish()
    if done then
      return
    end
    done = true
    for _, t in ipairs({ timer, quiet }) do
      t:stop()
      t:close()
    end
    pcall(vim.api.nvim_del_autocmd, autocmd)
    reply(collect(uris, encoding))
  end
  autocmd = vim.api.nvim_create_autocmd("DiagnosticChanged", {
    callback = function(args)
      local name = args.buf and vim.api.nvim_buf_is_valid(args.buf) and vim.api.nvim_buf_get_name(args.buf) or ""
      if not names or (name ~= "" and names[path(name)]) then
        -- Answered once the diagnostics rest: a language server's and a
        -- linter's reports of the same edit are one answer.
        quiet:stop()
        quiet:start(settle_ms, 0, vim.schedule_wrap(finish))
      end
    end,
  })
  timer:start(wait, 0, vim.schedule_wrap(finish))
  if how == "yield" then
    return coroutine.yield()
  end
  return vim.NIL -- dropped: the answer is sent later
end

return G
