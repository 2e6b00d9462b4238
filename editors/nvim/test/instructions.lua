-- Headless test of the project's instructions files in the chat, the
-- context view and the prompt preview, run by instructions_test.go in the
-- workspace (its AGENTS.md, and pkg/AGENTS.md, larger than a file's cap).
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, OPENAI_BASE_URL,
-- CTXLS_TEST_PHASE: "on" (the default; then project_instructions turned
-- off by setup() while the daemon runs) or "off" (off from the start).
-- Exits 0 on success, 1 with a message on stderr otherwise.
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(phase)
local messages, fail, wait, has, chat_bufs, expect = h.messages, h.fail, h.wait, h.has, h.chat_bufs, h.expect

local work = vim.loop.cwd()

-- line is the chat's third line: the instructions line, when there is one.
local function line(chat)
  return vim.api.nvim_buf_get_lines(chat, 2, 3, false)[1] or ""
end

local function instructions_shown(chat)
  return line(chat):find("^_instructions: ") ~= nil
end

-- ask asks question with :CtxlsAsk and waits for want in the chat and the
-- turn's end; it returns the chat buffer.
local function ask(ctxls, question, want)
  vim.cmd("CtxlsAsk " .. question)
  local chat
  wait("the answer to " .. question, function()
    chat = chat_bufs()[1]
    return chat ~= nil and has(chat, want) and not ctxls.busy()
  end)
  return chat
end

-- scratch_lines runs cmd, waits for the read-only window it opens (a
-- buffer whose first line starts with head), returns its lines and closes
-- it.
local function scratch_lines(cmd, head)
  local before = vim.api.nvim_get_current_buf()
  vim.cmd(cmd)
  local lines
  wait(cmd .. "'s window", function()
    local buf = vim.api.nvim_get_current_buf()
    if buf == before then
      return false
    end
    lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    return (lines[1] or ""):find(head, 1, true) == 1
  end)
  vim.cmd("close")
  return lines
end

local function holds(lines, want)
  return vim.tbl_contains(lines, want)
end

local function starting(lines, prefix)
  for _, l in ipairs(lines) do
    if l:sub(1, #prefix) == prefix then
      return l
    end
  end
  return nil
end

local ok, err = pcall(function()
  local ctxls = h.start({
    debounce = 0,
    project_instructions = phase ~= "off",
  })
  vim.o.columns, vim.o.lines = 160, 50
  vim.cmd("edit main.go")

  if phase == "off" then
    local chat = ask(ctxls, "Any rules?", "Off answer.")
    vim.wait(500) -- the turn's result, after its end
    expect(not instructions_shown(chat), "instructions named in the chat with project_instructions = false: " .. line(chat))
    local ctx = scratch_lines("CtxlsContext", "# ctxls session context")
    expect(not holds(ctx, "instructions:"), "the context view lists instructions with project_instructions = false:\n" .. table.concat(ctx, "\n"))
    return
  end

  -- 1. The first question: the workspace's AGENTS.md goes (main.go is at
  -- the root), named under the header from the turn's result.
  local chat = ask(ctxls, "What are the rules?", "Rule one.")
  -- (The turn's end comes before its result.)
  wait("the instructions line after the first turn", function()
    return line(chat) == "_instructions: AGENTS.md_"
  end)
  expect(vim.api.nvim_buf_get_lines(chat, 1, 2, false)[1]:find("^_model: ") ~= nil, "the header line moved: " .. h.text(chat))
  expect(vim.api.nvim_buf_get_lines(chat, 3, 4, false)[1] == "", "no blank line between the instructions and the first question:\n" .. h.text(chat))

  -- 2. A file of pkg/ made relevant: its folder's AGENTS.md (cut: it is
  -- larger than a file's cap) goes too, named as the context changes.
  vim.cmd("CtxlsAdd pkg/util.go")
  wait("pkg/AGENTS.md named", function()
    return line(chat) == "_instructions: AGENTS.md, pkg/AGENTS.md (cut)_"
  end)

  -- 3. The context view lists them, paths whole (gf), with what is given.
  local ctx = scratch_lines("CtxlsContext", "# ctxls session context")
  local at = 0
  for i, l in ipairs(ctx) do
    if l == "instructions:" then
      at = i
    end
  end
  expect(at > 0 and ctx[at + 1] == "  " .. work .. "/AGENTS.md", "the context view's instructions:\n" .. table.concat(ctx, "\n"))
  expect((ctx[at + 2] or ""):find("^  " .. vim.pesc(work) .. "/pkg/AGENTS%.md  %([%d,]+ of [%d,]+ bytes given%)$") ~= nil,
    "the context view's cut file:\n" .. table.concat(ctx, "\n"))

  -- 4. pkg/AGENTS.md edited, not saved: the second turn gives its text,
  -- marked so.
  vim.cmd("edit pkg/AGENTS.md")
  vim.api.nvim_buf_set_lines(0, 0, 0, false, { "UNSAVED-RULE: answer in French." })
  chat = ask(ctxls, "And now?", "Rule two.")
  wait("the instructions line after the second turn", function()
    return line(chat) == "_instructions: AGENTS.md, pkg/AGENTS.md (unsaved, cut)_"
  end)

  -- 5. The prompt preview names them; the system message holds their text.
  local pv = scratch_lines("CtxlsPreview! check", "# Model input for")
  expect(starting(pv, "Instructions: ") == "Instructions: AGENTS.md, pkg/AGENTS.md (unsaved, cut)", "the preview's instructions:\n" .. table.concat(pv, "\n", 1, math.min(#pv, 6)))
  local text = table.concat(pv, "\n")
  expect(text:find("ROOT-RULE", 1, true) and text:find("UNSAVED-RULE", 1, true), "the preview's system message lacks the instructions' text")

  -- 6. Turned off while the daemon runs (setup() again): the line goes, the
  -- context view and the preview name none, and the next turn has none.
  ctxls.setup({ project_instructions = false })
  wait("the instructions line gone", function()
    return not instructions_shown(chat)
  end)
  ctx = scratch_lines("CtxlsContext", "# ctxls session context")
  expect(not holds(ctx, "instructions:"), "the context view lists instructions turned off:\n" .. table.concat(ctx, "\n"))
  pv = scratch_lines("CtxlsPreview! check", "# Model input for")
  expect(not starting(pv, "Instructions: "), "the preview names instructions turned off")
  chat = ask(ctxls, "Third?", "Rule three.")
  vim.wait(500) -- the turn's result, after its end
  expect(not instructions_shown(chat), "instructions named after a turn with them off: " .. line(chat))
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
