-- The model's searches of the workspace (ctxls's grep, find_files and
-- list_directory tools): their card line, their results read back from
-- what the model got, and the quickfix list.
--
-- grep's output is ripgrep's: matching lines "path:LINE: text" (one only in
-- the editor's unsaved text ends with "  (unsaved)"), context lines
-- "path-LINE- text", "--" between groups, a blank line between files, maybe
-- a last "[N more matches in M files not shown: …]". find_files gives a
-- path a line, list_directory an entry a line (folders end with "/"). The
-- paths are relative to the workspace folder; with several, they start with
-- the folder's name.
local S = {}

local shared = require("ctxls.state")
local state, notify = shared.state, shared.notify
local is_chat = require("ctxls.daemon").is_chat

-- The search tools, by name (ctxls's own: no server).
S.tools = { grep = true, find_files = true, list_directory = true }

-- is_search reports whether p (ctxls/toolCall's params, or a stored call
-- shaped like them) is a search of ctxls's.
function S.is_search(p)
  return (p.server == nil or p.server == "") and S.tools[p.name or p.tool or ""] == true
end

local function decode(args)
  local ok, v = pcall(vim.json.decode, args or "")
  return (ok and type(v) == "table") and v or {}
end

local function str(v)
  return type(v) == "string" and v ~= "" and v or nil
end

-- code is s as inline code.
local function code(s)
  if s:find("`", 1, true) then
    return "`` " .. s .. " ``"
  end
  return "`" .. s .. "`"
end

-- label is what a search looked for, for its line: grep `loginRedirect` in
-- auth (*.go), find_files `**/*.go`, list_directory `auth`.
function S.label(name, args)
  local a = decode(args)
  local s = ""
  if name == "list_directory" then
    s = code(str(a.path) or ".")
  elseif str(a.pattern) then
    s = code((a.pattern:gsub("%s+", " ")))
  end
  if name ~= "list_directory" and str(a.path) then
    s = s .. " in " .. a.path
  end
  if name == "grep" and str(a.glob) then
    s = s .. " (" .. a.glob .. ")"
  end
  return s
end

-- parse reads a line of grep's output: { path, lnum, text, match } (match:
-- a matching line, else a context line), or nil for anything else. Of the
-- two forms the one whose "path:LINE:" prefix ends first wins (a match's
-- text may hold "-12- ", a context line's ":12: ").
function S.parse(line)
  local mp, ml, mt = line:match("^(.-):(%d+): (.*)$")
  local cp, cl, ct = line:match("^(.-)%-(%d+)%- (.*)$")
  if mp and mp ~= "" and (not cp or cp == "" or #mp + #ml <= #cp + #cl) then
    return { path = mp, lnum = tonumber(ml), text = mt, match = true }
  elseif cp and cp ~= "" then
    return { path = cp, lnum = tonumber(cl), text = ct, match = false }
  end
  return nil
end

local function lines(output)
  return vim.split((output or ""):gsub("\n$", ""), "\n", { plain = true })
end

local function number(s)
  return tonumber((s:gsub(",", ""))) or 0
end

-- thousands writes n as the daemon does: 12,345.
local function thousands(n)
  local s = tostring(n)
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

local function count(n, one, many)
  return n == 1 and ("1 " .. one) or (thousands(n) .. " " .. many)
end

-- summary says what a search found from its output, as the daemon's
-- summary (sent on the live call, not stored) says it: "12 matches in 4
-- files", "37 files", "14 entries". grep's results cut short say how many
-- there were and how many are shown; nil for an output it cannot read (an
-- error).
function S.summary(name, output)
  if type(output) ~= "string" or output:find("^error: ") then
    return nil
  end
  local ls = lines(output)
  if name == "grep" then
    if ls[1] == "No matches." then
      return "no matches"
    end
    local n, files, nfiles, more = 0, {}, 0, nil
    for _, l in ipairs(ls) do
      local m = S.parse(l)
      if m and m.match then
        n = n + 1
        if not files[m.path] then
          files[m.path], nfiles = true, nfiles + 1
        end
      end
      more = more or l:match("^%[([%d,]+) more match")
    end
    if n == 0 then
      return nil
    elseif more then
      return string.format("%s (%s shown)", count(n + number(more), "match", "matches"), thousands(n))
    end
    return count(n, "match", "matches") .. " in " .. count(nfiles, "file", "files")
  end
  -- find_files and list_directory: an item a line up to the first blank
  -- line, then the notes.
  if ls[1] == "No files found." then
    return "no files"
  elseif ls[1] == "(empty)" then
    return "empty"
  end
  local n, more = 0, nil
  for _, l in ipairs(ls) do
    if l == "" then
      break
    end
    n = n + 1
  end
  for _, l in ipairs(ls) do
    more = more or l:match("^%[([%d,]+) more ")
  end
  local one, many = "file", "files"
  if name == "list_directory" then
    one, many = "entry", "entries"
  end
  if more then
    return string.format("%s (%s shown)", count(n + number(more), one, many), thousands(n))
  end
  return count(n, one, many)
end

-- roots are the workspace folders the daemon searched: the client's
-- workspace folders, else its root, else the current directory.
function S.roots()
  local out = {}
  local client = require("ctxls").client()
  for _, f in ipairs(client and client.workspace_folders or {}) do
    if f.uri then
      table.insert(out, vim.uri_to_fname(f.uri))
    end
  end
  if #out == 0 and client and client.config and client.config.root_dir then
    table.insert(out, client.config.root_dir)
  end
  if #out == 0 then
    table.insert(out, vim.fn.getcwd())
  end
  return out
end

-- resolve is the file a result's path names: an absolute path as it is;
-- with one workspace folder, under it; with several, under the folder whose
-- name starts it.
function S.resolve(path, roots)
  roots = roots or S.roots()
  if path:sub(1, 1) == "/" then
    return path
  end
  if #roots > 1 then
    local head, rest = path:match("^([^/]+)/?(.*)$")
    for _, r in ipairs(roots) do
      if vim.fn.fnamemodify(r, ":t") == head then
        return rest == "" and r or (r .. "/" .. rest)
      end
    end
  end
  return (roots[1] or vim.fn.getcwd()) .. "/" .. path
end

-- items are a grep output's matches as quickfix items (filename, lnum,
-- text), or find_files' paths (lnum 1; path: the path as shown).
function S.items(name, output, roots)
  roots = roots or S.roots()
  local out = {}
  if name == "grep" then
    for _, l in ipairs(lines(output)) do
      local m = S.parse(l)
      if m and m.match then
        table.insert(out, { filename = S.resolve(m.path, roots), lnum = m.lnum, text = m.text })
      end
    end
  elseif name == "find_files" then
    for _, l in ipairs(lines(output)) do
      if l == "" or l == "No files found." then
        break
      end
      table.insert(out, { filename = S.resolve(l, roots), lnum = 1, text = "", path = l })
    end
  end
  return out
end

-- match_at is the file and line a line of grep's output names (a match
-- or a context line), or nil.
function S.match_at(line, roots)
  local m = S.parse(line)
  if m then
    return S.resolve(m.path, roots), m.lnum
  end
end

-- In the chat ------------------------------------------------------------------

-- open_match opens the file and line of the search result under the
-- cursor in a chat (grep's "path:LINE: text", a path find_files found).
function S.open_match()
  local tools = require("ctxls.tools") -- (it requires this module)
  local file, lnum = tools.match_at(vim.api.nvim_get_current_buf(), vim.fn.line("."))
  if file then
    tools.open_match(file, lnum)
  end
end

-- quickfix puts a search's results into the quickfix list (|ctxls-search|):
-- in a chat, the search the cursor is on, else its last one; elsewhere the
-- current session's last one.
function S.quickfix()
  local tools = require("ctxls.tools")
  local buf = vim.api.nvim_get_current_buf()
  local p = is_chat(buf) and tools.call_at(buf, vim.fn.line(".")) or nil
  if not (p and S.is_search(p)) then
    if not is_chat(buf) then
      buf = state.current and state.bufs[state.current]
    end
    p = buf and vim.api.nvim_buf_is_valid(buf) and tools.last_search(buf) or nil
  end
  if not p then
    notify("no search of the model's in the chat to list")
    return false
  end
  return tools.quickfix(p)
end

return S
