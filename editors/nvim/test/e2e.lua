-- Headless end-to-end test, run by editors/nvim/nvim_test.go:
--   nvim --headless --clean -c 'set rtp+=editors/nvim' -c 'luafile editors/nvim/test/e2e.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE, OPENAI_BASE_URL,
-- CTXLS_TEST_PHASE ("ask" or "resume"). Exits 0 on success, 1 with a
-- message on stderr otherwise.
local messages = {}

local function fail(msg)
  io.stderr:write("FAIL: " .. msg .. "\nnotifications:\n" .. table.concat(messages, "\n---\n") .. "\n")
  vim.cmd("cquit 1")
end

-- said reports whether a notification so far holds text.
local function said(text)
  for _, m in ipairs(messages) do
    if m:find(text, 1, true) then
      return true
    end
  end
  return false
end

local function wait(what, cond, ms)
  if not vim.wait(ms or 10000, cond, 20) then
    fail("timed out waiting for " .. what)
  end
end

local ok, err = pcall(function()
  vim.cmd("runtime plugin/ctxls.lua")
  local ctxls = require("ctxls")
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  ctxls.setup({
    cmd = { os.getenv("CTXLS_BIN"), "serve", "--data-dir", os.getenv("CTXLS_DATA_DIR") },
    provider = { baseURL = os.getenv("OPENAI_BASE_URL"), model = "test-model" },
    debounce = 0,
  })
  local file = os.getenv("CTXLS_TEST_FILE")
  vim.cmd("edit " .. file)
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)

  if os.getenv("CTXLS_TEST_PHASE") == "ask" then
    -- Change the buffer without saving.
    vim.api.nvim_buf_set_lines(0, 0, 0, false, { "// UNSAVED LINE FROM NEOVIM" })
    vim.cmd("CtxlsAdd")
    wait("context changed", function()
      return said("context changed: files (1)")
    end)
    vim.cmd("CtxlsAsk what does this file do?")
    local chat
    wait("the streamed answer", function()
      chat = vim.fn.bufnr("ctxls://chat/")
      if chat < 0 then
        return false
      end
      local text = table.concat(vim.api.nvim_buf_get_lines(chat, 0, -1, false), "\n")
      return text:find("It prints hello.", 1, true) ~= nil
    end)
    if vim.api.nvim_buf_get_option(chat, "filetype") ~= "markdown" then
      fail("chat buffer filetype")
    end
    wait("the turn to end", function()
      return require("ctxls").title() ~= ""
    end)
    -- The model's title (asked once, after the first answer) before the
    -- daemon goes: the next phase's requests are then its turn and its
    -- summary, in that order.
    wait("the model's title", function()
      return vim.api.nvim_buf_get_lines(chat, 0, 1, false)[1] == "# Hello program"
    end)
  else
    -- Resume the session made by the first run, from the picker.
    vim.ui.select = function(items, _, on_choice)
      on_choice(items[1])
    end
    vim.cmd("CtxlsSessions")
    wait("resume notification", function()
      return said("resumed context: files (1)")
    end)
    vim.cmd("CtxlsContext")
    wait("context buffer", function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
        if text:find("# ctxls session context", 1, true) then
          return text:find("  " .. file, 1, true) ~= nil
        end
      end
      return false
    end)

    -- A second turn, then :CtxlsCompact: the first turn is summarised for
    -- the model, both stay in the chat buffer, and a line marks where the
    -- model's view starts (after the first answer, before the second
    -- question).
    vim.cmd("CtxlsAsk and then?")
    local chat
    local function text()
      chat = vim.fn.bufnr("ctxls://chat/")
      return chat >= 0 and table.concat(vim.api.nvim_buf_get_lines(chat, 0, -1, false), "\n") or ""
    end
    wait("the second answer", function()
      return text():find("Then it exits.", 1, true) ~= nil
    end)
    wait("the second turn to end", function()
      return not require("ctxls").busy()
    end)
    vim.cmd("CtxlsCompact")
    wait("the compaction's notification", function()
      return said("are summarised for the model; every message is kept")
    end)
    wait("the mark in the chat buffer", function()
      return text():find("_summarised for the model: messages 1–2 (2); all are kept here_", 1, true) ~= nil
    end)
    local t = text()
    local first, mark, second = t:find("It prints hello.", 1, true), t:find("_summarised for the model", 1, true), t:find("and then?", 1, true)
    if not (first and mark and second and first < mark and mark < second and t:find("Then it exits.", 1, true)) then
      fail("the chat buffer after :CtxlsCompact:\n" .. t)
    end
  end
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
