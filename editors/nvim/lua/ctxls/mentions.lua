-- @file mentions in the compose window (:CtxlsChat). Typing @ at the start
-- of the question or after a space opens Neovim's own completion menu with
-- the workspace's files (ctxls.workspace.files, the text after @ as the
-- query, best match first), updated as you type on; Ctrl-Y (or Enter)
-- takes the selected one, Ctrl-N and Ctrl-P move, Ctrl-E closes the menu.
-- The question is sent as typed: the daemon sends each file it mentions
-- (@path, @path:12, @path:12-30) with the turn.
--
-- No completion plugin is needed; the compose buffer's 'omnifunc' lists
-- the same files, for Ctrl-X Ctrl-O and the completion plugins that take
-- an omnifunc (nvim-cmp's cmp-omni, blink.cmp's omni source).

local C = {}

local P = require("ctxls.protocol")

local limit = 50

-- The completion options while the menu is ours: shown for one file too,
-- the best one selected but not typed until taken.
local completeopt = "menuone,noinsert"

-- token is the mention being typed before the cursor in the current
-- window: its line (1-based), the byte column of its @ (0-based) and the
-- query after it; nil when the cursor is not in one.
local function token()
  local pos = vim.api.nvim_win_get_cursor(0)
  local before = vim.api.nvim_get_current_line():sub(1, pos[2])
  local at, query = before:match("()@(%S*)$")
  if not at or (at > 1 and not before:sub(at - 1, at - 1):match("%s")) or #query > 256 then
    return nil
  end
  return pos[1], at - 1, query
end

-- items are the completion items of the daemon's files.
local function items(files)
  local out = {}
  for _, f in ipairs(files or {}) do
    -- equal: the menu keeps every file as more is typed (Neovim would
    -- keep only those starting with it); the list is asked for again.
    table.insert(out, { word = "@" .. f.path, abbr = f.path, menu = "[file]", equal = 1, dup = 1 })
  end
  return out
end

-- state: the compose buffer → { seq: the last query asked, taken: the
-- mention whose menu just ended, a file taken or not ("row:col:query"), saved: the global 'completeopt'
-- while Insert mode lasts (before 0.11, where it is not the buffer's) }.
local state = {}

local function ask(buf)
  local st = state[buf]
  local row, col, query = token()
  if not row then
    st.taken = nil
    return
  end
  local key = row .. ":" .. col .. ":" .. query
  if st.taken == key then
    return -- its menu just ended: not again
  end
  if vim.fn.pumvisible() == 1 then
    local info = vim.fn.complete_info({ "selected", "items" })
    local selected = info.items and info.items[(info.selected or -1) + 1]
    if selected and selected.word == "@" .. query then
      return -- Ctrl-N or Ctrl-P put the selected file in: the menu stays
    end
  end
  st.taken = nil
  if not require("ctxls").client() then
    return -- no daemon running: no menu, and no error at each key
  end
  st.seq = st.seq + 1
  local seq = st.seq
  require("ctxls").command(P.commands.workspace_files, { query = query, limit = limit }, function(r)
    if st.seq ~= seq or vim.api.nvim_get_current_buf() ~= buf or not vim.api.nvim_get_mode().mode:find("^i") then
      return -- typed on, or left
    end
    if st.taken == key then
      return -- the menu was closed (Ctrl-E) or a file taken while this was asked: not again
    end
    local r2, c2, q2 = token()
    if r2 ~= row or c2 ~= col or q2 ~= query then
      return
    end
    vim.fn.complete(col + 1, items(r.files))
  end, function() end)
end

-- omnifunc lists the workspace's files for the mention before the cursor
-- (Ctrl-X Ctrl-O; completion plugins with an omni source).
function C.omnifunc(findstart, base)
  if findstart == 1 then
    local row, col = token()
    return row and col or -3 -- -3: no completion here, quietly
  end
  local client = require("ctxls").client()
  if not client then
    return {}
  end
  local params = { command = P.commands.workspace_files, arguments = { { query = base:gsub("^@", ""), limit = limit } } }
  local reply
  if vim.fn.has("nvim-0.11") == 1 then
    reply = client:request_sync("workspace/executeCommand", params, 2000)
  else
    reply = client.request_sync("workspace/executeCommand", params, 2000)
  end
  return items(reply and reply.result and reply.result.files)
end

-- mentioned lists the files message mentions (@path, @path:12-30), as
-- the chat shows them above the question: each names a file of the
-- workspace root (relative to it, or absolute inside it) outside .git,
-- the lines kept, trailing punctuation left out ("see @main.go, then");
-- but the file at except (the one going anyway). The daemon finds them
-- itself: this is what the chat says goes.
function C.mentioned(message, root, except)
  local out, seen = {}, {}
  root = vim.fn.fnamemodify(root, ":p"):gsub("/$", "")
  for raw in (" " .. message):gmatch("%s@(%S+)") do
    for _, text in ipairs({ raw, (raw:gsub("[%.,;:!%?%)%]}'\"]+$", "")) }) do
      local name, lines = text:match("^(.-)(:%d+%-?%d*)$")
      name = name or text
      local path = name:sub(1, 1) == "/" and name or (root .. "/" .. name)
      path = vim.fn.fnamemodify(path, ":p")
      local rel = path:sub(1, #root + 1) == root .. "/" and path:sub(#root + 2) or nil
      if rel and vim.fn.filereadable(path) == 1 and not ("/" .. rel):find("/%.git/") then
        if path ~= except and not seen[path] then
          seen[path] = true
          table.insert(out, rel .. (lines or ""))
        end
        break
      end
    end
  end
  return out
end

-- attach makes buf (the compose buffer) complete @ mentions.
function C.attach(buf)
  state[buf] = { seq = 0 }
  vim.api.nvim_buf_set_option(buf, "omnifunc", "v:lua.require'ctxls.mentions'.omnifunc")
  if vim.fn.has("nvim-0.11") == 1 then
    vim.api.nvim_buf_set_option(buf, "completeopt", completeopt)
  end
  local group = vim.api.nvim_create_augroup("ctxls_mentions_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChangedI", "TextChangedP" }, {
    group = group,
    buffer = buf,
    callback = function()
      ask(buf)
    end,
  })
  vim.api.nvim_create_autocmd("CompleteDone", {
    group = group,
    buffer = buf,
    callback = function()
      -- A file taken, or the menu closed (Ctrl-E): none again until the
      -- mention is typed on.
      local row, col, query = token()
      if row then
        state[buf].taken = row .. ":" .. col .. ":" .. query
      end
    end,
  })
  if vim.fn.has("nvim-0.11") == 0 then
    vim.api.nvim_create_autocmd("InsertEnter", {
      group = group,
      buffer = buf,
      callback = function()
        state[buf].saved = state[buf].saved or vim.o.completeopt
        vim.o.completeopt = completeopt
      end,
    })
    vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
      group = group,
      buffer = buf,
      callback = function()
        if state[buf].saved then
          vim.o.completeopt = state[buf].saved
          state[buf].saved = nil
        end
      end,
    })
  end
end

return C
