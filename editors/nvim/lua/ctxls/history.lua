-- The questions sent, brought back in the compose window (:CtxlsChat) as a
-- shell brings back its commands: Ctrl-P an earlier one, Ctrl-N a later
-- one and, past the newest, the draft that was there. The keys are
-- avante.nvim's (its prompt_logger's prev_prompt/next_prompt) and
-- opencode.nvim's, in Insert and Normal mode; while a completion menu is
-- open (an @file mention's, nvim-cmp's, blink.cmp's) they move in the
-- menu as ever.
--
-- The questions are kept, newest last, in a file of Neovim's state folder
-- (stdpath("state"), "data" before 0.8 had it): they are there in the next
-- Neovim too. A question asked again moves to the end; the oldest go past
-- max.

local H = {}

local max = 100

local list -- the questions, oldest first (read from the file when first needed)

-- at: the compose buffer → { index in list of the question shown, draft: the
-- lines there before the first Ctrl-P }; no entry: the draft is shown.
local at = {}

local function path()
  local ok, dir = pcall(vim.fn.stdpath, "state")
  if not ok or type(dir) ~= "string" then
    dir = vim.fn.stdpath("data")
  end
  return dir .. "/ctxls/questions.json"
end

local function load()
  if list then
    return list
  end
  list = {}
  local f = io.open(path(), "r")
  if f then
    local ok, decoded = pcall(vim.fn.json_decode, f:read("*a"))
    f:close()
    if ok and type(decoded) == "table" then
      for _, q in ipairs(decoded) do
        if type(q) == "string" then
          table.insert(list, q)
        end
      end
    end
  end
  return list
end

local function save()
  local file = path()
  vim.fn.mkdir(vim.fn.fnamemodify(file, ":h"), "p")
  local tmp = file .. ".tmp"
  local f = io.open(tmp, "w")
  if not f then
    return
  end
  f:write(vim.fn.json_encode(list))
  f:close()
  os.rename(tmp, file)
end

-- add records a question sent; the compose windows show their drafts again.
function H.add(question)
  question = vim.trim(question or "")
  if question == "" then
    return
  end
  load()
  -- Another Neovim may have added some meanwhile: read the file again.
  list = nil
  load()
  for i = #list, 1, -1 do
    if list[i] == question then
      table.remove(list, i)
    end
  end
  table.insert(list, question)
  while #list > max do
    table.remove(list, 1)
  end
  save()
  at = {}
end

local function show(buf, lines)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    local last = #lines
    vim.api.nvim_win_set_cursor(win, { last, #lines[last] })
  end
end

-- older shows the question before the one shown in buf (the newest when
-- the draft is shown); at the oldest it stays.
function H.older(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local qs = load()
  local here = at[buf]
  if #qs == 0 or (here and here.index <= 1) then
    return
  end
  if not here then
    here = { index = #qs + 1, draft = vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
    at[buf] = here
  end
  here.index = here.index - 1
  show(buf, vim.split(qs[here.index], "\n", { plain = true }))
end

-- newer shows the question after the one shown in buf, and past the
-- newest the draft.
function H.newer(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local here = at[buf]
  if not here then
    return
  end
  local qs = load()
  here.index = here.index + 1
  if here.index > #qs then
    at[buf] = nil
    show(buf, here.draft)
  else
    show(buf, vim.split(qs[here.index], "\n", { plain = true }))
  end
end

-- menu_open reports whether a completion menu is open: Neovim's own (whose
-- keys Neovim leaves unmapped while it runs a completion), nvim-cmp's or
-- blink.cmp's (which map them globally: the compose buffer's maps come
-- first).
local function menu_open()
  if vim.fn.pumvisible() == 1 then
    return true
  end
  local cmp = package.loaded["cmp"]
  if cmp and type(cmp.visible) == "function" and cmp.visible() then
    return true
  end
  local blink = package.loaded["blink.cmp"]
  return blink ~= nil and type(blink.is_visible) == "function" and blink.is_visible() == true
end

-- attach maps the keys in the compose buffer buf.
function H.attach(buf)
  local function map(mode, lhs, fn, desc)
    local opts = { noremap = true, desc = desc }
    if mode == "i" then
      -- In Insert mode, an expression: the key itself while a completion
      -- menu is open, else the command (the text is changed outside the
      -- expression, where it may be).
      opts.expr = true
      opts.callback = function()
        if menu_open() then
          return vim.api.nvim_replace_termcodes(lhs, true, false, true)
        end
        return vim.api.nvim_replace_termcodes("<Cmd>lua require('ctxls.history')." .. fn .. "()<CR>", true, false, true)
      end
    else
      opts.callback = H[fn]
    end
    vim.api.nvim_buf_set_keymap(buf, mode, lhs, "", opts)
  end
  for _, mode in ipairs({ "i", "n" }) do
    map(mode, "<C-p>", "older", "ctxls: the question sent before")
    map(mode, "<C-n>", "newer", "ctxls: the question sent after, or the draft")
  end
end

return H
