-- :checkhealth ctxls
local M = {}

local health = vim.health or require("health")
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local err = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  start("ctxls")
  local cfg = require("ctxls").config
  -- Where the plugin looks: $PATH, then Go's install folder.
  local cmd, missing = require("ctxls").resolve_cmd()
  if not cmd then
    err(missing)
    return
  end
  local bin = cmd[1]
  ok("binary: " .. vim.fn.exepath(bin))
  local version = vim.fn.system({ bin, "version" })
  if vim.v.shell_error == 0 then
    ok("version: " .. vim.trim(version))
  else
    err("`" .. bin .. " version` failed: " .. version)
  end
  local dir = cfg.data_dir or os.getenv("CTXLS_DATA_DIR") or ((os.getenv("XDG_DATA_HOME") or (os.getenv("HOME") .. "/.local/share")) .. "/ctxls")
  if vim.fn.isdirectory(dir) == 1 then
    ok("data dir: " .. dir)
  else
    warn("data dir " .. dir .. " does not exist yet (created on first start)")
  end
  local p = cfg.provider or {}
  if p.api_key ~= nil then
    -- The key setup() gives goes to the daemon alone: `ctxls doctor`, a
    -- process of its own, would not have it. The daemon is asked instead.
    local key = require("ctxls.key")
    local _, why = key.resolve(p.api_key)
    if why then
      err("key: " .. why)
    else
      ok("key: from " .. key.source(p.api_key))
    end
    info("provider: :CtxlsSetup asks the daemon, which has the key, what it makes of it")
    if require("ctxls").client() then
      ok("daemon running")
    else
      warn("daemon not running: open a file to start it")
    end
    return
  end
  local args = { bin, "doctor" }
  if p.baseURL then
    vim.list_extend(args, { "--base-url", p.baseURL })
  end
  if p.model then
    vim.list_extend(args, { "--model", p.model })
  end
  if p.apiKeyEnv then
    vim.list_extend(args, { "--api-key-env", p.apiKeyEnv })
  end
  local out = vim.fn.system(args)
  if vim.v.shell_error == 0 then
    ok("provider reachable:\n" .. out)
  else
    err("provider check failed:\n" .. out)
  end
  if require("ctxls").client() then
    ok("daemon running")
  else
    warn("daemon not running: open a file to start it")
  end
end

return M
