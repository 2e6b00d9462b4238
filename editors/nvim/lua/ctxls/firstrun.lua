-- The first run: what the plugin says when a question meets no usable
-- model provider (the daemon's error kind noProvider), in the words of
-- the user's setup() rather than the daemon's settings, and :CtxlsSetup,
-- which shows what is set and what is missing.
--
-- :CtxlsSetup shows rather than asks: Neovim's plugins are configured in
-- the user's init.lua (or a plugin manager's opts), which a prompt could
-- not write to, so it says what is set, what the daemon makes of it, and
-- what to add to setup() (as :checkhealth does for what it checks).
local key = require("ctxls.key")
local P = require("ctxls.protocol")
local chat = require("ctxls.chat")
local S = require("ctxls.state")
local ctxls, state = S.ctxls, S.state
local scratch, set_lines = chat.scratch, chat.set_lines
local renew_key = require("ctxls.daemon").renew_key

local M = {}

-- hosted_hosts need a key and have a default model (chat.Resolve).
local hosted_hosts = { ["api.openai.com"] = true, ["api.anthropic.com"] = true }

local function nonempty(s)
  return type(s) == "string" and s ~= "" and s or nil
end

-- facts are what decides the words, from the user's setup() and Neovim's
-- environment (which the daemon inherits) as the daemon's Resolve reads
-- them: the base URL and its host, the model, the key's variable, whether
-- a key is at hand, and the key lookup's failure.
local function facts(provider, k)
  provider = type(provider) == "table" and provider or {}
  local f = { provider = provider }
  f.anthropic = provider.api == "anthropic"
  f.base = nonempty(provider.baseURL) or (not f.anthropic and nonempty(vim.env.OPENAI_BASE_URL)) or nil
  f.host = key.host({ baseURL = f.base })
  if f.host == "api.anthropic.com" and provider.api == nil then
    f.anthropic = true
  end
  f.hosted = f.base == nil or hosted_hosts[f.host] == true
  f.model = nonempty(provider.model) or nonempty(vim.env.CTXLS_MODEL)
  f.name = key.env_name(provider)
  if f.anthropic and not nonempty(provider.apiKeyEnv) then
    f.name = "ANTHROPIC_API_KEY"
  end
  f.from_setup = k and k.spec ~= nil and k.value ~= nil
  f.has_key = f.from_setup or nonempty(vim.env[f.name]) ~= nil
  f.key_err = k and k.err or nil
  f.vendor = f.anthropic and "Anthropic" or "OpenAI"
  f.pass = f.anthropic and "pass show anthropic" or "pass show openai"
  return f
end

-- key_words say how to give the key, in setup()'s words: Markdown lines
-- for the chat, the settings in code blocks a narrow window does not
-- break up.
local function key_words(f, lead)
  return {
    lead .. " in `require(\"ctxls\").setup()`, a command that prints it (or a function that returns it):",
    "",
    "```lua",
    string.format("provider = { api_key = \"cmd:%s\" }", f.pass),
    "```",
    "",
    "or set `" .. f.name .. "` before Neovim starts.",
  }
end

local other_server = {
  "For another server (Ollama, llama.cpp, vLLM), its address and a model:",
  "",
  "```lua",
  "provider = { baseURL = \"http://127.0.0.1:11434/v1\", model = \"llama3.1\" }",
  "```",
}

local function paragraphs(...)
  local out = {}
  for _, p in ipairs({ ... }) do
    if #out > 0 then
      table.insert(out, "")
    end
    vim.list_extend(out, type(p) == "table" and p or { p })
  end
  return table.concat(out, "\n")
end

-- no_provider is what to say when a question was refused with the kind
-- noProvider: notice (one line for the command line), chat (the answer's
-- error line) and more (a paragraph under it, or nil). message is the
-- daemon's, kept where it says more than the plugin knows: a key is at
-- hand, or the server is the user's own and has a model.
function M.no_provider(provider, k, message)
  local f = facts(provider, k)
  if f.key_err then
    return {
      notice = "no key: " .. f.key_err,
      chat = "error: no key: " .. f.key_err,
      more = paragraphs(key_words(f, "Mend the command, or give the key another way"), "`:CtxlsSetup` shows what is set."),
    }
  end
  if not f.hosted then
    if not f.model and f.base:find("^https?://") then
      return {
        notice = "no model is set for the server at " .. f.base .. ": :CtxlsModel picks one",
        chat = "error: no model is set for the server at " .. f.base,
        more = "`:CtxlsModel` picks one of its models (for this session, or new ones too), or set `provider.model` in `require(\"ctxls\").setup()`.",
      }
    end
    return { notice = message, chat = "error: " .. message }
  end
  if f.has_key then
    return { notice = message, chat = "error: " .. message }
  end
  return {
    notice = "no model provider yet: the chat says what to set",
    chat = "error: no model provider yet",
    more = paragraphs(key_words(f, "To use " .. f.vendor .. ", give ctxls your key"), other_server, "`:CtxlsSetup` shows what is set."),
  }
end

-- report is :CtxlsSetup's text: what is set (setup(), the environment),
-- then the daemon's answer to ctxls.models.list once it comes (answer:
-- nil while it is asked; { result = r } or { err = e }), then what to set.
function M.report(provider, k, answer)
  local f = facts(provider, k)
  local lines = { "# ctxls set-up", "" }
  local function line(label, text)
    table.insert(lines, string.format("%-8s %s", label ~= "" and (label .. ":") or "", text))
  end
  if f.base then
    line("server", f.base .. (nonempty(f.provider.baseURL) and "" or " (from OPENAI_BASE_URL)"))
  else
    line("server", f.vendor .. "'s API (no baseURL set)")
  end
  if f.model then
    line("model", f.model .. (nonempty(f.provider.model) and "" or " (from CTXLS_MODEL)"))
  else
    line("model", f.hosted and (f.vendor .. "'s default (none set)") or "none set")
  end
  if f.key_err then
    line("key", "none: " .. f.key_err)
  elseif f.from_setup then
    line("key", "from " .. key.source(f.provider.api_key) .. ", given to the daemon as " .. f.name)
  elseif nonempty(vim.env[f.name]) then
    line("key", f.name .. " from the environment")
  elseif f.hosted then
    line("key", "missing: " .. f.vendor .. "'s API needs one")
  else
    line("key", "none (" .. f.name .. " is not set; a local server may need none)")
  end
  if not answer then
    line("daemon", "asking the server for its models…")
  elseif answer.result then
    local r = answer.result
    local models = r.models or {}
    local shown = {}
    for i = 1, math.min(#models, 5) do
      table.insert(shown, models[i])
    end
    local list = #models == 0 and "no models listed"
      or string.format("%d model%s: %s%s", #models, #models == 1 and "" or "s", table.concat(shown, ", "), #models > 5 and ", …" or "")
    line("daemon", "ready; the server lists " .. list)
    if nonempty(r.current) then
      line("", "questions go to " .. r.current .. (nonempty(r.default) and r.default ~= r.current and (" (new sessions: " .. r.default .. ")") or ""))
    else
      line("", "no model chosen yet: :CtxlsModel picks one")
    end
  else
    local e = answer.err or {}
    local said = M.no_provider(provider, k, (tostring(e.message or e):gsub("\n", " ")))
    line("daemon", (said.chat:gsub("^error: ", "")))
  end
  vim.list_extend(lines, {
    "",
    "To change them, in your init.lua:",
    "",
    "    require(\"ctxls\").setup({ provider = {",
    "      api_key = \"cmd:" .. f.pass .. "\",  -- a command that prints the key (or a function)",
    "      -- another server (Ollama, llama.cpp, vLLM):",
    "      -- baseURL = \"http://127.0.0.1:11434/v1\", model = \"llama3.1\",",
    "    } })",
    "",
    "or set `" .. f.name .. "` before Neovim starts. `:CtxlsModel` picks the model from",
    "the server's list, for this session or new ones too. `:help ctxls-setup`",
  })
  return lines
end

-- :CtxlsSetup -----------------------------------------------------------------

-- setup_view (:CtxlsSetup) shows what is set for the provider (setup(),
-- the environment), then what the daemon makes of it (ctxls.models.list:
-- the server's models, or why it has no usable provider), then what to
-- set: M.report (above).
function M.setup_view()
  local lines = M.report(ctxls.config.provider, state.key, nil)
  scratch(lines, "ctxls://setup")
  local buf = vim.api.nvim_get_current_buf()
  pcall(vim.cmd, "resize " .. math.min(#lines + 1, math.max(vim.o.lines - 10, 5))) -- all of it
  local function show(answer)
    if vim.api.nvim_buf_is_valid(buf) then
      set_lines(buf, 0, -1, M.report(ctxls.config.provider, state.key, answer))
    end
  end
  if state.key_recheck then
    state.key_recheck = nil
    renew_key()
  end
  if not ctxls.ensure_client() then
    show({ err = { message = state.missing or "the daemon is not running" } })
    return
  end
  ctxls.command(P.commands.models_list, { sessionId = state.current }, function(r)
    show({ result = r })
  end, function(err)
    show({ err = err })
  end)
end

return M
