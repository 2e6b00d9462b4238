-- Headless test of :CtxlsUndo and :CtxlsRedo, run by undo_test.go
-- (TestNeovimUndo):
--   nvim --headless --clean -c 'set rtp+=.' -c 'luafile test/undo.lua'
-- Environment: CTXLS_BIN, CTXLS_DATA_DIR, CTXLS_TEST_FILE (main.go, with
-- typed.go beside it), OPENAI_BASE_URL. The fake model's turn (edit
-- main.go and typed.go, create pkg/new.go) is queued by the Go test; this
-- file acts as the person at the keyboard. Exits 0 on success, 1 with a
-- message on stderr otherwise.
local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")("undo")
local messages, fail, wait, text, said, chat_text, press, expect = h.messages, h.fail, h.wait, h.text, h.said, h.chat_text, h.press, h.expect

local ok, err = pcall(function()
  vim.cmd("runtime plugin/ctxls.lua")
  local ctxls = require("ctxls")
  local P = require("ctxls.protocol")
  local edits = require("ctxls.edits")
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  ctxls.setup({
    cmd = { os.getenv("CTXLS_BIN"), "serve", "--data-dir", os.getenv("CTXLS_DATA_DIR") },
    provider = { baseURL = os.getenv("OPENAI_BASE_URL"), model = "test-model" },
  })
  local file = os.getenv("CTXLS_TEST_FILE")
  local dir = vim.fn.fnamemodify(file, ":h")
  vim.cmd("cd " .. vim.fn.fnameescape(dir))
  vim.cmd("edit typed.go")
  local typed = vim.api.nvim_get_current_buf()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local main, main_win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  wait("the daemon", function()
    local c = ctxls.client()
    return c ~= nil and c.initialized
  end)

  local function document(buf)
    local result
    ctxls.command(P.commands.document_get, { uri = vim.uri_from_bufnr(buf) }, function(r)
      result = r
    end)
    wait("ctxls.document.get", function()
      return result ~= nil
    end)
    return result.text
  end
  local function in_sync(buf, when)
    wait("the daemon to hold the buffer's text " .. when, function()
      return document(buf) == text(buf) .. "\n"
    end, 3000)
  end
  local function said_since(n, s)
    for i = n + 1, #messages do
      if messages[i]:find(s, 1, true) then
        return true
      end
    end
    return false
  end

  -- 1. The turn, in the auto mode, with an unsaved line in main.go.
  vim.cmd("CtxlsReviewMode auto")
  wait("the review mode", function()
    return said("review mode auto")
  end)
  vim.api.nvim_buf_set_lines(main, 0, 0, false, { "// UNSAVED LINE" })
  local unsaved = text(main)
  vim.cmd("CtxlsAsk change things")
  wait("the turn's end", function()
    return chat_text():find("Done.", 1, true) and not ctxls.busy()
  end)
  local edited = unsaved:gsub('println%("hello"%)', 'println("hello, world")')
  expect(text(main) == edited, "main.go after the turn:\n" .. text(main))
  expect(text(typed) == "package typed\n\nvar n = 2", "typed.go after the turn:\n" .. text(typed))
  local new = edits.find_buf(dir .. "/pkg/new.go")
  expect(new and text(new) == "package pkg", "the created file's buffer: " .. (new and text(new) or "none"))

  -- The created file is shown in a window; the user types in typed.go.
  vim.cmd("split")
  local new_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(new_win, new)
  vim.api.nvim_set_current_win(main_win)
  vim.api.nvim_buf_set_lines(typed, -1, -1, false, { "// mine" })
  in_sync(typed, "after typing")
  in_sync(main, "after the turn")

  -- 2. :CtxlsUndo: main.go exactly as before the turn, new.go gone,
  -- typed.go left and named; the cursor stays in main.go's window.
  local n = #messages
  vim.cmd("CtxlsUndo")
  wait("the undo's answer", function()
    return said_since(n, "undid")
  end)
  expect(text(main) == unsaved, "main.go after the undo is not the unsaved text:\n" .. text(main))
  expect(vim.api.nvim_buf_get_option(main, "modified"), "main.go is not modified after the undo")
  expect(edits.find_buf(dir .. "/pkg/new.go") == nil and not vim.api.nvim_buf_is_valid(new), "the created file's buffer is still there")
  expect(vim.loop.fs_stat(dir .. "/pkg/new.go") == nil, "the created file is on disk")
  expect(vim.api.nvim_win_is_valid(new_win), "the created file's window was closed")
  expect(text(typed) == "package typed\n\nvar n = 2\n// mine", "typed.go, typed in since, was touched:\n" .. text(typed))
  expect(vim.api.nvim_get_current_win() == main_win, "the undo took the cursor from main.go's window")
  local chat = chat_text()
  expect(chat:find("_undid the model's changes to 2 files: ", 1, true) and chat:find("main.go", 1, true)
    and chat:find("pkg/new.go", 1, true) and chat:find("; left: typed.go (", 1, true),
    "the chat's note of the undo:\n" .. chat)
  in_sync(main, "after the undo")

  -- 3. u takes the undo back; <C-r> makes it again.
  press("u")
  expect(text(main) == edited, "u did not take the undo back:\n" .. text(main))
  in_sync(main, "after u")
  press("<C-r>")
  expect(text(main) == unsaved, "<C-r> did not undo again:\n" .. text(main))
  in_sync(main, "after <C-r>")

  -- 4. :CtxlsRedo applies the turn again; a second has nothing to redo.
  n = #messages
  vim.cmd("CtxlsRedo")
  wait("the redo's answer", function()
    return said_since(n, "redid")
  end)
  expect(text(main) == edited, "main.go after the redo:\n" .. text(main))
  new = edits.find_buf(dir .. "/pkg/new.go")
  expect(new and text(new) == "package pkg", "the created file after the redo: " .. (new and text(new) or "none"))
  expect(chat_text():find("_redid the model's changes to 2 files: ", 1, true), "the chat's note of the redo:\n" .. chat_text())
  expect(vim.api.nvim_get_current_win() == main_win, "the redo took the cursor from main.go's window")
  n = #messages
  vim.cmd("CtxlsRedo")
  wait("the second redo's answer", function()
    return said_since(n, "nothing to redo")
  end)
  expect(text(main) == edited, "the second redo changed main.go:\n" .. text(main))

  -- 5. :CtxlsRetry takes the turn back: asked whether its file changes
  -- go too; yes undoes them (from the question on) before the question
  -- is asked again.
  local prompts = {}
  vim.ui.select = function(items, o, on_choice)
    table.insert(prompts, o.prompt)
    on_choice(items[1])
  end
  vim.cmd("CtxlsRetry")
  wait("the question asked again", function()
    return #prompts > 0 and not ctxls.busy() and chat_text():find("## ctxls", 1, true) and not chat_text():find("Done.", 1, true)
  end)
  expect(prompts[1] == "Also undo the file changes of the turns taken back?", "the retry asked: " .. vim.inspect(prompts))
  expect(text(main) == unsaved, "main.go after the retry's undo:\n" .. text(main))
  expect(edits.find_buf(dir .. "/pkg/new.go") == nil, "the created file's buffer is still there after the retry's undo")
  expect(vim.api.nvim_get_current_win() == main_win, "the retry took the cursor from main.go's window")
end)
if not ok then
  fail(tostring(err))
end
vim.cmd("qall!")
