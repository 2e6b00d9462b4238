-- The provider's API key given in setup() (provider.api_key), for the
-- daemon: it reaches the daemon in its process environment, under the
-- variable the daemon reads the key from, and nowhere else. It is never
-- sent over LSP (the provider table the daemon gets has no api_key), never
-- written to a file, never shown: a message about it names where it came
-- from, not what it is.
local M = {}

-- env_name is the variable the daemon reads provider's key from (chat/
-- provider.go keyEnv, with the API inferred from the base URL as its
-- Resolve does): apiKeyEnv when set, ANTHROPIC_API_KEY for Anthropic's
-- API, else OPENAI_API_KEY.
function M.env_name(provider)
  provider = type(provider) == "table" and provider or {}
  if type(provider.apiKeyEnv) == "string" and provider.apiKeyEnv ~= "" then
    return provider.apiKeyEnv
  end
  if provider.api == "anthropic" or (provider.api == nil and M.host(provider) == "api.anthropic.com") then
    return "ANTHROPIC_API_KEY"
  end
  return "OPENAI_API_KEY"
end

-- host is the host of provider.baseURL (lower case), or nil.
function M.host(provider)
  local url = type(provider) == "table" and provider.baseURL or nil
  if type(url) ~= "string" then
    return nil
  end
  local host = url:match("^%a[%w+.-]*://([^/:?#]+)")
  return host and host:lower() or nil
end

-- wire is provider as the daemon takes it: without api_key (the daemon
-- rejects a field it does not know, and the key never goes over LSP).
function M.wire(provider)
  if type(provider) ~= "table" or provider.api_key == nil then
    return provider
  end
  local out = vim.deepcopy(provider)
  out.api_key = nil
  if next(out) == nil then
    return nil -- (an empty table would go as [])
  end
  return out
end

-- source says where spec (provider.api_key) takes the key from, for
-- messages: never the key itself.
function M.source(spec)
  if type(spec) == "function" then
    return "provider.api_key (a function)"
  elseif type(spec) == "string" and spec:find("^cmd:") then
    return "provider.api_key's command `" .. vim.trim(spec:sub(5)) .. "`"
  elseif type(spec) == "string" then
    return "provider.api_key"
  end
  return nil
end

-- command_timeout is how long a "cmd:" command may take (a password
-- manager may ask for its passphrase first), in ms.
M.command_timeout = 60000

-- run runs a "cmd:" command line with sh and returns what it printed on
-- stdout, or nil and why it failed: its exit status and the last line it
-- printed on stderr (never its stdout, which may hold the key).
local function run(line)
  local out, errs = {}, {}
  local ok, job = pcall(vim.fn.jobstart, { "sh", "-c", line }, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      out = data or {}
    end,
    on_stderr = function(_, data)
      errs = data or {}
    end,
  })
  if not ok or job <= 0 then
    return nil, "could not be run"
  end
  local status = vim.fn.jobwait({ job }, M.command_timeout)[1]
  if status == -1 then
    vim.fn.jobstop(job)
    return nil, string.format("did not end within %d s", M.command_timeout / 1000)
  end
  if status ~= 0 then
    local last
    for _, l in ipairs(errs) do
      if vim.trim(l) ~= "" then
        last = vim.trim(l)
      end
    end
    return nil, string.format("failed (exit status %d%s)", status, last and (": " .. last) or "")
  end
  -- The key is the first line it printed (pass prints the password first,
  -- then any other fields).
  for _, l in ipairs(out) do
    if vim.trim(l) ~= "" then
      return vim.trim(l)
    end
  end
  return nil, "printed nothing"
end

-- resolve turns spec (provider.api_key: "cmd:COMMAND", a function, or the
-- key itself) into the key, or nil and a message that says what failed
-- without the key's text.
function M.resolve(spec)
  if spec == nil then
    return nil
  end
  local what = M.source(spec)
  if type(spec) == "function" then
    local ok, v = pcall(spec)
    if not ok then
      return nil, what .. " failed: " .. tostring(v)
    end
    if type(v) ~= "string" or vim.trim(v) == "" then
      return nil, what .. " returned no key"
    end
    return vim.trim(v)
  end
  if type(spec) ~= "string" then
    return nil, "provider.api_key is a " .. type(spec) .. ": give \"cmd:COMMAND\", a function, or the key"
  end
  if spec:find("^cmd:") then
    local key, why = run(spec:sub(5))
    if not key then
      return nil, what .. " " .. why
    end
    return key
  end
  if vim.trim(spec) == "" then
    return nil, "provider.api_key is empty"
  end
  return vim.trim(spec)
end

-- fingerprint tells two keys apart without keeping either.
function M.fingerprint(key)
  return key and vim.fn.sha256(key) or nil
end

-- quietly runs fn with Neovim's LSP log at WARN or above: starting a
-- client logs its process's environment at INFO ("Starting RPC client"),
-- and that environment holds the key.
function M.quietly(fn)
  local log = require("vim.lsp.log")
  local level = log.get_level()
  if level < vim.log.levels.WARN then
    log.set_level(vim.log.levels.WARN)
  end
  local ok, a, b = pcall(fn)
  log.set_level(level)
  if not ok then
    error(a, 0)
  end
  return a, b
end

return M
