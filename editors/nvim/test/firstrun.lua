-- Headless tests of the first run, run by firstrun_test.go, one phase per
-- Neovim process: the key from setup() (provider.api_key), the message
-- when no provider is usable, :CtxlsSetup, and :CtxlsModel's choice of
-- the model for new sessions too.
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE,
-- CTXLS_TEST_PROVIDER_URL (the fake provider; OPENAI_BASE_URL is empty),
-- CTXLS_TEST_PHASE, CTXLS_TEST_KEY_FILE (holds the key the fake provider
-- wants), CTXLS_TEST_PASS (a script standing in for a password manager),
-- CTXLS_TEST_LOG (the daemon's log file).
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(phase)
local messages, fail, wait, has, chat_bufs = h.messages, h.fail, h.wait, h.has, h.chat_bufs
-- The key, from a file: were it in the environment, every process would
-- have it.
local secret = vim.trim(table.concat(vim.fn.readfile(os.getenv("CTXLS_TEST_KEY_FILE")), "\n"))

local ask = h.ask

-- read is a file's text ("" when there is none).
local function read(path)
  local f = io.open(path)
  if not f then
    return ""
  end
  local s = f:read("*a")
  f:close()
  return s
end

-- nowhere fails when the key shows in anything Neovim wrote or shows:
-- its notifications and :messages, the LSP log (at its most verbose), the
-- daemon's log, its own environment (which every other process it starts
-- inherits), the settings it gives the daemon.
local function nowhere(ctxls)
  local function check(what, text)
    if text:find(secret, 1, true) then
      fail("the key is in " .. what .. ":\n" .. text)
    end
  end
  check("the notifications", table.concat(messages, "\n"))
  check(":messages", vim.fn.execute("messages"))
  check("the LSP log", read(require("vim.lsp.log").get_filename()))
  check("the daemon's log", read(os.getenv("CTXLS_TEST_LOG")))
  check("Neovim's environment", vim.inspect(vim.fn.environ()))
  check("a command's environment", vim.fn.system({ "env" }))
  local client = ctxls.client()
  check("the daemon's settings", vim.inspect(client.config.settings) .. vim.inspect(client.config.init_options))
end

local ok, err = pcall(function()
  -- Everything Neovim's LSP client may log is logged: the key must not be.
  require("vim.lsp.log").set_level(vim.log.levels.DEBUG)
  local url = os.getenv("CTXLS_TEST_PROVIDER_URL")
  local provider = { baseURL = url, model = "test-model" }
  if phase == "cmdfail" then
    -- OpenAI's API, which needs the key.
    provider = { api_key = "cmd:" .. os.getenv("CTXLS_TEST_PASS") .. " show openai" }
  elseif phase == "cmd" then
    provider.api_key = "cmd:" .. os.getenv("CTXLS_TEST_PASS") .. " show openai"
  elseif phase == "function" then
    provider.api_key = function()
      return secret
    end
  end
  local ctxls = h.start({ provider = provider, debounce = 0, log_file = os.getenv("CTXLS_TEST_LOG") })
  vim.cmd("edit " .. os.getenv("CTXLS_TEST_FILE"))
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)

  if phase == "cmd" or phase == "function" then
    -- The key a command prints (a password manager's), or a function
    -- returns, reaches the provider; nothing Neovim writes or shows holds it.
    ask(ctxls, "hello with a key", "answered with the key")
    nowhere(ctxls)
  elseif phase == "cmdfail" then
    -- The command fails: said once, with its exit status and what it
    -- printed on stderr, never what it printed on stdout; the question
    -- is refused, the chat saying what failed and how to give the key.
    wait("the failure's notice", function()
      return h.said("failed (exit status 1: openai is not in the password store.)")
    end)
    local notice
    for _, m in ipairs(messages) do
      if m:find("openai is not in the password store", 1, true) then
        if notice then
          fail("the failure was said twice:\n" .. table.concat(messages, "\n"))
        end
        notice = m
      end
    end
    local want = "ctxls: provider.api_key's command `" .. os.getenv("CTXLS_TEST_PASS") .. " show openai` failed (exit status 1: openai is not in the password store.)"
    if notice ~= want then
      fail("the notice: " .. notice .. "\nwant: " .. want)
    end
    vim.cmd("CtxlsAsk hello?")
    wait("the refusal", function()
      local b = chat_bufs()[1]
      return b ~= nil and has(b, "_error: no key: provider.api_key's command `") and not ctxls.busy()
    end)
    local chat = h.text(chat_bufs()[1])
    if not chat:find("failed (exit status 1: openai is not in the password store.)_\n\nMend the command, or give the key another way in `require(\"ctxls\").setup()`, a command that prints it (or a function that returns it):\n\n```lua\nprovider = { api_key = \"cmd:pass show openai\" }\n```\n\nor set `OPENAI_API_KEY` before Neovim starts.", 1, true) then
      fail("the chat after the refusal:\n" .. chat)
    end
    nowhere(ctxls)
    -- The password store filled (and the provider one of the user's, to
    -- reach it here), the next question looks again: the daemon starts
    -- again with the key.
    local f = assert(io.open(os.getenv("CTXLS_TEST_PASS") .. ".fixed", "w"))
    f:close()
    ctxls.setup({ provider = { baseURL = url, model = "test-model" } })
    local before = h.daemon_pid()
    ask(ctxls, "hello once more", "answered with the key")
    if h.daemon_pid() == before then
      fail("the daemon was not started again with the key")
    end
    nowhere(ctxls)
  elseif phase == "setup" then
    -- :CtxlsSetup shows what is set and the daemon's answer: the server's
    -- models.
    vim.cmd("CtxlsSetup")
    local buf = vim.fn.bufnr("ctxls://setup")
    wait("the daemon's answer", function()
      return buf > 0 and has(buf, "daemon:  ready; the server lists 2 models: test-model, big-model")
    end)
    local t = h.text(buf)
    for _, want in ipairs({
      "server:  " .. os.getenv("OPENAI_BASE_URL"),
      "model:   test-model",
      "key:     none (OPENAI_API_KEY is not set; a local server may need none)",
      "         questions go to test-model",
      "      api_key = \"cmd:pass show openai\",  -- a command that prints the key (or a function)",
      "or set `OPENAI_API_KEY` before Neovim starts.",
    }) do
      if not t:find(want, 1, true) then
        fail(":CtxlsSetup lacks " .. want .. ":\n" .. t)
      end
    end
  elseif phase == "model-default" then
    -- :CtxlsModel asks, after the model, whether it is for this session
    -- only or new ones too: this session's model leaves a new session
    -- with the provider's; the one for new sessions too is a new
    -- session's model (the provider sees it in the requests).
    local function pick(model, scope)
      local asked = {}
      vim.ui.select = function(items, opts, on_choice)
        table.insert(asked, opts.prompt)
        if vim.tbl_contains(items, model) then
          on_choice(model)
        else
          if not vim.tbl_contains(items, scope) then
            fail("the second question offers " .. vim.inspect(items))
          end
          on_choice(scope)
        end
      end
      vim.cmd("CtxlsModel")
      return asked
    end
    ask(ctxls, "first question", "answer 1")
    local asked = pick("other-model", "This session")
    wait("the session's model", function()
      return h.said("this session's turns use other-model")
    end)
    if #asked ~= 2 or asked[2] ~= "Use other-model for" then
      fail("the questions asked: " .. vim.inspect(asked))
    end
    ask(ctxls, "second question", "answer 2")
    local function new_session()
      local n = #messages
      vim.cmd("CtxlsNew")
      wait("the new session", function()
        return vim.tbl_contains(vim.list_slice(messages, n + 1), "ctxls: new session")
      end)
    end
    new_session()
    ask(ctxls, "in a new session", "answer 3")
    pick("big-model", "This session and new ones")
    wait("the default model", function()
      return h.said("this session and new ones use big-model")
    end)
    new_session()
    -- Its chat's header says the model before anything is asked.
    local newer = chat_bufs()[#chat_bufs()]
    local line2 = vim.api.nvim_buf_get_lines(newer, 1, 2, false)[1]
    if not line2:find("^_model: big%-model_$") then
      fail("the new session's header: " .. line2)
    end
    ask(ctxls, "in a newer session", "answer 4")
  else
    fail("unknown phase " .. tostring(phase))
  end
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qa!")
