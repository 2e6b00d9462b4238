-- Headless test of the model's run_command in the chat, run by
-- editors/nvim/command_test.go (TestNeovimCommand). Environment:
-- CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE, OPENAI_BASE_URL,
-- CTXLS_TEST_PHASE ("command", or "command-resume": the session resumed
-- in a new Neovim shows the call the same); the fake
-- model's call is queued by the Go test. This file is the person at the
-- keyboard: it allows the call with the chat's key, then types on in the
-- file while the command runs. Exits 0 on success, 1 with a message on
-- stderr otherwise.
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")("command")
local messages, fail, wait, chat_text, press, expect = h.messages, h.fail, h.wait, h.chat_text, h.press, h.expect

local call = "• run `seq 1 25; printf 'line one\\nline two\\n'; sleep 1; echo done; exit 2`"

-- block is the call's line and the lines that follow it up to the closing
-- fence (nil without the line).
local function block(chat)
  local lines = vim.api.nvim_buf_get_lines(chat, 0, -1, false)
  for i, l in ipairs(lines) do
    if l:sub(1, #call) == call then
      local out = { l }
      for j = i + 1, #lines do
        table.insert(out, lines[j])
        if j > i + 1 and lines[j]:find("^```") then
          break
        end
      end
      return out, i
    end
  end
end

local function numbers(from, to)
  local out = {}
  for n = from, to do
    table.insert(out, tostring(n))
  end
  return out
end

local ok, err = pcall(function()
  local ctxls = h.start({
    debounce = 0,
  })
  vim.o.columns, vim.o.lines = 160, 50
  local ended_want = vim.list_extend({ call .. " — failed: exit status 2", "```", "… 9 lines above" }, numbers(10, 25))
  vim.list_extend(ended_want, { "line one", "line two", "done", "[exit status 2]", "```" })
  if os.getenv("CTXLS_TEST_PHASE") == "command-resume" then
    -- A new Neovim: the resumed session's call the same, from the store.
    local chat = h.resume_first("It exited with 2.")
    local b = block(chat)
    expect(vim.deep_equal(b, ended_want), "the resumed call:\n" .. table.concat(b or {}, "\n") .. "\n\nthe chat:\n" .. h.text(chat))
    return
  end
  local file = os.getenv("CTXLS_TEST_FILE")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)
  vim.cmd("CtxlsAsk run the script")
  local chat
  wait("the permission question", function()
    chat = vim.fn.bufnr("ctxls://chat/")
    return chat >= 0 and #ctxls.questions() > 0
  end)
  local q = ctxls.questions()[1]
  expect(q.message:find("run the command seq 1 25;", 1, true), "the question: " .. q.message)
  local waiting = block(chat)
  expect(waiting and waiting[1] == call .. " — waiting for your permission", "the call's line while asked:\n" .. chat_text())

  -- Allowed in the chat with its key, as a person does, then back to the
  -- file, where the user types on.
  local file_win = vim.api.nvim_get_current_win()
  vim.api.nvim_set_current_win(vim.fn.bufwinid(chat))
  press("a")
  vim.api.nvim_set_current_win(file_win)
  vim.api.nvim_win_set_cursor(file_win, { 1, 3 })

  -- While the command sleeps: its output so far under the call's line,
  -- its tail in a fenced block, the lines above counted.
  local running
  wait("the output so far", function()
    local b = block(chat)
    if b and b[1] == call .. " — running" and vim.tbl_contains(b, "line two") then
      running = b
      return true
    end
  end)
  local want = vim.list_extend({ call .. " — running", "```", "… 7 lines above" }, numbers(8, 25))
  vim.list_extend(want, { "line one", "line two", "```" })
  expect(vim.deep_equal(running, want), "the call while it runs:\n" .. table.concat(running, "\n") .. "\n\nwant:\n" .. table.concat(want, "\n"))
  expect(vim.api.nvim_get_current_win() == file_win, "the progress took the focus")
  expect(vim.deep_equal(vim.api.nvim_win_get_cursor(file_win), { 1, 3 }), "the progress moved the cursor in the file")

  -- The end: the output's tail with the exit status, the call failed.
  wait("the answer", function()
    return chat_text():find("It exited with 2.", 1, true) ~= nil and not ctxls.busy()
  end)
  local ended, row = block(chat)
  want = ended_want
  expect(vim.deep_equal(ended, want), "the call at its end:\n" .. table.concat(ended or {}, "\n") .. "\n\nwant:\n" .. table.concat(want, "\n"))
  -- Shown, not folded away; its status marked failed.
  vim.api.nvim_win_call(vim.fn.bufwinid(chat), function()
    expect(vim.fn.foldclosed(row + 1) == -1, "the command's output is folded away")
  end)
  local failed = false
  for _, ns in pairs(vim.api.nvim_get_namespaces()) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })) do
      local d = m[4]
      if d.hl_group == "CtxlsToolFailed" and m[3] == #call + #" — " then
        failed = true
      end
    end
  end
  expect(failed, "the call's status is not highlighted CtxlsToolFailed")
  expect(vim.api.nvim_get_current_win() == file_win, "the call's end took the focus")
  expect(vim.deep_equal(vim.api.nvim_win_get_cursor(file_win), { 1, 3 }), "the call's end moved the cursor in the file")
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
