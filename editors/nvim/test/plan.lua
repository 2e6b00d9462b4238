-- Headless test of the model's plan in the chat, run by
-- editors/nvim/plan_test.go. Environment: CTXLS_BIN, CTXLS_DATA_DIR,
-- OPENAI_BASE_URL, CTXLS_TEST_PHASE ("plan", or "plan-resume": the session
-- resumed in a new Neovim). Exits 0 on success, 1 with a message on stderr
-- otherwise.
local phase = os.getenv("CTXLS_TEST_PHASE")
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(phase)
local messages, fail, wait, chat_text = h.messages, h.fail, h.wait, h.chat_text

-- The plan as the chat shows it: its call's line, then the items, open.
local want = {
  "• plan — 1 of 3 done",
  "- [x] Read main.go",
  "- [~] Fix the handler  (high priority)",
  "- [ ] Run the tests",
}

local function check(chat)
  local lines = vim.api.nvim_buf_get_lines(chat, 0, -1, false)
  for i, l in ipairs(lines) do
    if l == want[1] then
      if not vim.deep_equal({ unpack(lines, i, i + #want - 1) }, want) then
        fail("the plan in the chat:\n" .. chat_text())
      end
      -- Shown, not folded away.
      local win = vim.fn.bufwinid(chat)
      vim.api.nvim_win_call(win, function()
        if vim.fn.foldclosed(i + 1) ~= -1 then
          fail("the plan's items are folded away")
        end
      end)
      return
    end
  end
  fail("no plan in the chat:\n" .. chat_text())
end

local ok, err = pcall(function()
  local ctxls = h.start({
    debounce = 0,
  })
  vim.o.columns, vim.o.lines = 160, 50
  if phase == "plan" then
    vim.cmd("CtxlsAsk make a plan")
  else
    vim.ui.select = function(items, _, on_choice)
      on_choice(items[1])
    end
    vim.cmd("CtxlsSessions")
  end
  local chat
  wait("the answer", function()
    chat = vim.fn.bufnr("ctxls://chat/")
    return chat >= 0 and chat_text():find("Planned.", 1, true) ~= nil and not ctxls.busy()
  end)
  check(chat)
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
