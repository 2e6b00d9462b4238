-- Headless test of the editor's diagnostics for the model, run by
-- diagnostics_test.go (TestNeovimDiagnostics):
--   nvim --headless --clean -c 'set rtp+=.' -c 'luafile test/diagnostics.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE (main.go, with
-- other.go beside it), OPENAI_BASE_URL. The fake model's replies (calls of
-- the diagnostics tool) are queued by the Go test, which checks what the
-- model got; this file sets the diagnostics, as a language server would.
-- Exits 0 on success, 1 with a message on stderr otherwise.
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")("diagnostics")
local messages, fail, wait, chat_text = h.messages, h.fail, h.wait, h.chat_text

local expect = h.expect

local ok, err = pcall(function()
  local ctxls = h.start()
  local file = os.getenv("CTXLS_TEST_FILE")
  local dir = vim.fn.fnamemodify(file, ":h")
  vim.cmd("cd " .. vim.fn.fnameescape(dir))
  vim.cmd("edit " .. vim.fn.fnameescape(dir .. "/other.go"))
  local other = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local main = vim.api.nvim_get_current_buf()
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)

  -- A language server's and a linter's diagnostics, in two namespaces, as
  -- vim.diagnostic holds them: 0-based lines, byte columns. On line 4
  -- `x` is at byte 20, after "é" (2 bytes) and "😀" (4): UTF-16 character 17.
  local ls, lint = vim.api.nvim_create_namespace("fake-ls"), vim.api.nvim_create_namespace("fake-lint")
  local line4 = vim.api.nvim_buf_get_lines(main, 3, 4, false)[1]
  local x = line4:find("x)", 1, true) - 1
  expect(x == 20, "the test's line: x at byte " .. x)
  local E, W, I = vim.diagnostic.severity.ERROR, vim.diagnostic.severity.WARN, vim.diagnostic.severity.INFO
  vim.diagnostic.set(ls, main, {
    { lnum = 3, col = x, end_lnum = 3, end_col = x + 1, severity = E, source = "fake-ls", code = "UndeclaredName", message = "undefined: x" },
    { lnum = 0, col = 0, severity = I, source = "fake-ls", message = "information is left out" },
  })
  vim.diagnostic.set(lint, main, {
    { lnum = 2, col = 5, severity = W, source = "fake-lint", message = "main is too short\nsecond line" },
  })
  vim.diagnostic.set(ls, other, {
    { lnum = 0, col = 8, severity = E, source = "fake-ls", code = 42, message = "package clash" },
  })

  -- The model calls the tool (for all, then for main.go): the Go test
  -- checks what it got.
  vim.cmd("CtxlsAsk what is broken?")
  wait("the turn's end", function()
    return chat_text():find("Two errors.", 1, true) and not ctxls.busy()
  end, 20000)
  expect(chat_text():find("diagnostics", 1, true), "the tool call's line is not in the chat:\n" .. chat_text())

  -- waitMs: the answer waits for a DiagnosticChanged of a file asked
  -- about, not of another, or waitMs. The handler is run as Neovim 0.10+
  -- runs it (in a coroutine; 0.7's rpc path is the one the reviews use).
  local client = ctxls.client()
  -- x's character in the negotiated encoding: Neovim 0.7 negotiates none
  -- (UTF-16), 0.10 and later offer UTF-8 first. The Go test reads it too.
  local want_x = ({ ["utf-8"] = 20, ["utf-16"] = 17, ["utf-32"] = 16 })[client.offset_encoding]
  local f = io.open(os.getenv("CTXLS_TEST_ENCODING_FILE"), "w")
  f:write(client.offset_encoding)
  f:close()
  local D = require("ctxls.diagnostics")
  local function ask(params)
    local res = {}
    local co = coroutine.create(function()
      res.answer = D.request(params, client)
      res.at = (vim.uv or vim.loop).now()
    end)
    local started = (vim.uv or vim.loop).now()
    assert(coroutine.resume(co))
    return res, started
  end
  local main_uri = vim.uri_from_fname(file)
  local res, started = ask({ uris = { main_uri }, waitMs = 8000 })
  vim.wait(300)
  vim.diagnostic.set(lint, other, { { lnum = 0, col = 0, severity = W, source = "fake-lint", message = "elsewhere" } })
  vim.wait(300)
  expect(res.answer == nil, "answered before main.go's diagnostics changed: " .. vim.inspect(res.answer))
  vim.diagnostic.set(lint, main, { { lnum = 4, col = 0, severity = W, source = "fake-lint", message = "after the edit" } })
  wait("the answer after main.go's change", function()
    return res.answer ~= nil
  end, 3000)
  expect(res.at - started < 3000, "the answer waited for waitMs")
  local got = res.answer
  expect(#got == 1 and got[1].uri == main_uri, "the answer's files: " .. vim.inspect(got))
  local messages_now = {}
  for _, d in ipairs(got[1].diagnostics) do
    table.insert(messages_now, d.message)
  end
  table.sort(messages_now)
  expect(table.concat(messages_now, "|") == "after the edit|information is left out|undefined: x",
    "main.go's diagnostics after the change: " .. vim.inspect(got))
  for _, d in ipairs(got[1].diagnostics) do
    if d.message == "undefined: x" then
      expect(d.range.start.line == 3 and d.range.start.character == want_x and d.range["end"].character == want_x + 1 and d.severity == 1
        and d.code == "UndeclaredName" and d.source == "fake-ls", "the error as LSP's: " .. vim.inspect(d))
    end
  end
  -- No change: answered when waitMs has passed.
  res, started = ask({ uris = { main_uri }, waitMs = 700 })
  wait("the answer after waitMs", function()
    return res.answer ~= nil
  end, 3000)
  expect(res.at - started >= 650, "answered before waitMs: " .. (res.at - started) .. " ms")
  -- A file not loaded has an empty list.
  local gone = D.request({ uris = { vim.uri_from_fname(dir .. "/nowhere.go") } }, client)
  expect(#gone == 1 and #gone[1].diagnostics == 0, "a file not loaded: " .. vim.inspect(gone))
  expect(vim.json.encode(gone):find('"diagnostics":[]', 1, true), "an empty list is not sent as []: " .. vim.json.encode(gone))
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
