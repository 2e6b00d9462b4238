-- The model's tool calls in a chat buffer, and the permission question.
--
-- Each call is one line, "• server · tool `{args}` — status" (ctxls's own
-- tools by name), updated in place by the call's id as ctxls/toolCall
-- reports it. Once it ends with an output, the line becomes "▾ …" and the
-- output follows it in a fenced block: a fold (foldexpr below), closed at
-- first; za, or <CR> on the line, opens it. A run_command's line names the
-- command ("• run `make test` — failed: exit status 2"); its output (the tail of it) follows the line in a fenced block
-- as it runs, updated in place, and stays shown at its end.
local T = {}

-- command_lines is how many lines of a command's output the chat shows
-- (its tail: "… N lines above" says how many are left out).
T.command_lines = 20

-- The statuses of ctxls/toolCall (docs/protocol.md).
local P = require("ctxls.protocol")
local S = require("ctxls.search")
T.status = P.tool_status

local ns = vim.api.nvim_create_namespace("ctxls_tools") -- one extmark per call, on its line
local hl_ns = vim.api.nvim_create_namespace("ctxls_tools_hl")

vim.cmd([[
  highlight default link CtxlsTool Special
  highlight default link CtxlsToolPending WarningMsg
  highlight default link CtxlsToolFailed ErrorMsg
  highlight default link CtxlsToolDeclined WarningMsg
  highlight default link CtxlsToolCancelled Comment
  highlight default link CtxlsToolDone CtxlsTool
  highlight default link CtxlsToolNote Comment
  highlight default link CtxlsSearchFile Directory
  highlight default link CtxlsSearchContext Comment
  highlight default link CtxlsSearchUnsaved Comment
]])

-- calls[buf][id] = { mark = extmark id, n = output lines after the line,
-- p = the call's latest params }
-- (the newest call of that id: a history shown again makes new ones).
-- gap[buf]: the buffer ends with a tool block, so prose that follows
-- starts after a blank line.
local calls, gap = {}, {}

local set_lines = require("ctxls.buf").set_lines

-- set_line replaces line row's text (nvim_buf_set_lines would move the
-- extmark on it to the next line).
local function set_line(buf, row, text)
  local old = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_text(buf, row, 0, row, #old, { text })
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
end

-- pending: the calls waiting for the user's permission, by id.
local pending = {}

-- split_name gives the server and tool of a name the model called:
-- mcp__SERVER__TOOL, else one of ctxls's own tools ("" server).
function T.split_name(name)
  local rest = name:match("^mcp__(.+)$")
  if rest then
    local server, tool = rest:match("^(.-)__(.+)$")
    if server and server ~= "" then
      return server, tool
    end
  end
  return "", name
end

-- short shortens a call's arguments (JSON) for its line: one line, at most
-- 60 characters, as inline code.
local function short(args)
  args = vim.trim(((args or ""):gsub("%s+", " ")))
  if args == "" or args == "{}" then
    return ""
  end
  if vim.fn.strchars(args) > 60 then
    args = vim.fn.strcharpart(args, 0, 59) .. "…"
  end
  if args:find("`", 1, true) then
    return " `` " .. args .. " ``"
  end
  return " `" .. args .. "`"
end

-- plan_items is the plan an update_plan call (ctxls's own) set: its items
-- ({content, status, priority}), or nil for another call or arguments that
-- are not a plan.
function T.plan_items(p)
  if (p.server or "") ~= "" or (p.name or p.tool) ~= "update_plan" then
    return nil
  end
  local ok, args = pcall(vim.json.decode, p.arguments or "")
  if not ok or type(args) ~= "table" or type(args.items) ~= "table" then
    return nil
  end
  return args.items
end

-- command is the command line of a run_command call (ctxls's own) and
-- its cwd, or nil for another call.
local function command(p)
  if (p.server or "") ~= "" or (p.name or p.tool) ~= "run_command" then
    return nil
  end
  local ok, args = pcall(vim.json.decode, p.arguments or "")
  if not ok or type(args) ~= "table" or type(args.command) ~= "string" then
    return nil
  end
  return args.command, type(args.cwd) == "string" and args.cwd ~= "" and args.cwd or nil
end
T.command = command

-- command_args is a command's line for its call's line: one line, at most
-- 80 characters, as inline code, and " in `cwd`" when it names one.
local function command_args(cmd, cwd)
  local function code(s)
    s = vim.trim((s:gsub("%s+", " ")))
    if vim.fn.strchars(s) > 80 then
      s = vim.fn.strcharpart(s, 0, 79) .. "…"
    end
    return s:find("`", 1, true) and ("`` " .. s .. " ``") or ("`" .. s .. "`")
  end
  return " " .. code(cmd) .. (cwd and (" in " .. code(cwd)) or "")
end

-- exit_status is how a command ended, from its summary or, for a stored
-- call, the last line of its output ("[exit status 2]"), or nil.
local function exit_status(p)
  if p.summary and p.summary ~= "" then
    return (p.summary:gsub("%s+", " "))
  end
  local last = vim.trim(p.output or ""):match("([^\n]*)$") or ""
  local n = last:match("^%[exit status (%d+)%]$")
  if n then
    return "exit status " .. n
  elseif last:find("^%[killed by ") then
    return last:sub(2, -2)
  elseif last:find("^%[the command timed out") then
    return "timed out"
  end
end

local plan_marks = { [P.plan_status.completed] = "[x]", [P.plan_status.in_progress] = "[~]" }

-- plan_lines are a plan's items as a Markdown task list: "- [x] done",
-- "- [~] under way", "- [ ] to do", a high priority said after the item.
local function plan_lines(items)
  local out = {}
  for _, it in ipairs(items) do
    local text = tostring(it.content or ""):gsub("%s+", " ")
    local prio = it.priority == P.plan_priority.high and "  (high priority)" or ""
    table.insert(out, "- " .. (plan_marks[it.status] or "[ ]") .. " " .. text .. prio)
  end
  if #out == 0 then
    out = { "(the plan is empty)" }
  end
  return out
end

local function status_text(p)
  local items = p.status == T.status.done and T.plan_items(p)
  if items then
    local done = 0
    for _, it in ipairs(items) do
      done = done + (it.status == P.plan_status.completed and 1 or 0)
    end
    return string.format("%d of %d done", done, #items)
  end
  if command(p) then
    if p.status == T.status.failed or p.status == T.status.done then
      local how = exit_status(p)
      if how then
        return p.status == T.status.failed and ("failed: " .. how) or how
      end
    elseif p.status == T.status.running then
      return "running" -- its output follows the line
    end
  end
  if p.status == T.status.done and p.summary and p.summary ~= "" then
    return (p.summary:gsub("%s+", " "))
  elseif p.status == T.status.pending then
    return "waiting for your permission"
  elseif p.status == T.status.running and p.progress and p.progress ~= "" then
    return "running: " .. (p.progress:gsub("%s+", " "))
  end
  return p.status or ""
end

local status_hl = {
  pending = "CtxlsToolPending",
  failed = "CtxlsToolFailed",
  declined = "CtxlsToolDeclined",
  cancelled = "CtxlsToolCancelled",
  done = "CtxlsToolDone",
}

-- line is a call's line: its glyph (▾ with an output to unfold, • without),
-- what is called, the arguments and the status (a call that says what
-- came of it in a few words, its summary, ends with that). A search names
-- what it looked for: "grep `loginRedirect` — 12 matches in 4 files".
local function line(p, has_output)
  local what = p.tool or p.name or "?"
  if p.server and p.server ~= "" then
    what = p.server .. " · " .. what
  end
  local args = short(p.arguments)
  local cmd, cwd = command(p)
  if T.plan_items(p) then
    what, args, has_output = "plan", "", false -- the items follow the line, not folded
  elseif cmd then
    -- "run", not run_command: Neovim 0.7's Markdown syntax marks a "_"
    -- inside a word as an error (a red block).
    what, args = "run", command_args(cmd, cwd)
    if p.status ~= T.status.declined then
      has_output = false -- its output follows the line, not folded
    end
  elseif S.is_search(p) then
    local label = S.label(p.name or p.tool, p.arguments)
    args = label ~= "" and (" " .. label) or ""
  end
  local head = (has_output and "▾ " or "• ") .. what .. args
  return head, head .. " — " .. status_text(p)
end

-- fenced is text as a fenced block (a fence longer than any backtick run
-- in it); with tail, only its last tail lines, after a line that says how
-- many are left out ("… 7 lines above"; its row in the block is the third
-- value).
local function fenced(out, tail)
  if out == "" then
    out = "(no output)"
  end
  local longest = 0
  for run in out:gmatch("`+") do
    longest = math.max(longest, #run)
  end
  local fence = string.rep("`", math.max(3, longest + 1))
  local lines = vim.split((out:gsub("\r?\n$", "")), "\r?\n")
  local note
  if tail and #lines > tail then
    local above = #lines - tail
    lines = { unpack(lines, above + 1) }
    table.insert(lines, 1, string.format("… %d %s above", above, above == 1 and "line" or "lines"))
    note = 1
  end
  table.insert(lines, 1, fence)
  table.insert(lines, fence)
  return lines, note
end

-- output_lines is a call's output as a fenced block, or nil while it
-- runs, and whether it is shown open (not folded), and the row of a note
-- in it. A command's output is its tail, shown as it runs too.
local function output_lines(p)
  local ended = p.status == T.status.done
    or p.status == T.status.failed
    or p.status == T.status.declined
    or p.status == T.status.cancelled
  if command(p) and p.status ~= T.status.declined then
    local out = ended and p.output or (p.status == T.status.running and p.progress)
    if not out or (not ended and out == "") then
      return nil
    end
    local lines, note = fenced(out, T.command_lines)
    return lines, true, note
  end
  if not ended or p.output == nil then
    return nil
  end
  local items = p.status == T.status.done and T.plan_items(p)
  if items then
    return plan_lines(items), true
  end
  return (fenced(p.output))
end

local function highlight(buf, row, head, text, status)
  vim.api.nvim_buf_clear_namespace(buf, hl_ns, row, row + 1)
  vim.api.nvim_buf_add_highlight(buf, hl_ns, "CtxlsTool", row, 0, #head)
  local group = status_hl[status]
  if group then
    vim.api.nvim_buf_add_highlight(buf, hl_ns, group, row, #head + #" — ", #text)
  end
end

-- highlight_results marks a search's results, out (fenced) from row first
-- on: a result's "path:LINE:" (or path) as the quickfix list shows file
-- names, context lines and the unsaved mark dimmed.
local function highlight_results(buf, first, out, name)
  vim.api.nvim_buf_clear_namespace(buf, hl_ns, first, first + #out - 2)
  -- (Extmarks: nvim_buf_add_highlight is deprecated from Neovim 0.11.)
  local function hl(group, row, from, to)
    vim.api.nvim_buf_set_extmark(buf, hl_ns, row, from, { end_row = row, end_col = to, hl_group = group })
  end
  for i = 2, #out - 1 do
    local l, row = out[i], first + i - 2
    local m = name == "grep" and S.parse(l)
    if m then
      local loc = #m.path + 1 + #tostring(m.lnum) + 1
      if m.match then
        hl("CtxlsSearchFile", row, 0, loc)
        local mark = "  (unsaved)"
        if l:sub(-#mark) == mark then
          hl("CtxlsSearchUnsaved", row, #l - #mark + 2, #l)
        end
      else
        hl("CtxlsSearchContext", row, 0, #l)
      end
    elseif name == "find_files" and l ~= "" and not l:find("^[%[(]") and l ~= "No files found." then
      hl("CtxlsSearchFile", row, 0, #l)
    end
  end
end

-- update shows a call in buf from ctxls/toolCall's params (or a stored
-- call shaped like them): a new line at the end for an id not seen, else
-- its line changed in place, its output added once it ends.
function T.update(buf, p)
  calls[buf] = calls[buf] or {}
  pending[p.id] = p.status == T.status.pending or nil
  local c = calls[buf][p.id]
  local out, open, note = output_lines(p)
  local head, text = line(p, out ~= nil or (c ~= nil and c.n > 0))
  local row = c and vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})[1]
  if not row then
    -- At the end, after a blank line unless it follows prose's blank
    -- line or another call; the last line stays empty for what follows.
    local last = vim.api.nvim_buf_line_count(buf)
    local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
    local before = last >= 2 and vim.api.nvim_buf_get_lines(buf, last - 2, last - 1, false)[1] or ""
    if tail ~= "" then
      set_lines(buf, last, last, { "", text, "" })
      row = last + 1
    elseif before == "" or gap[buf] then
      set_lines(buf, last - 1, last, { text, "" })
      row = last - 1
    else
      set_lines(buf, last - 1, last, { "", text, "" })
      row = last
    end
    -- right_gravity false: the mark stays on the line as it is replaced.
    c = { mark = vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { right_gravity = false }), n = 0 }
    calls[buf][p.id] = c
    gap[buf] = true
  elseif not out then
    set_line(buf, row, text)
  end
  c.p = p
  if out then
    -- The line and its output in one change, its fold known before: the
    -- fold levels of the changed lines are computed as they change. A
    -- plan is shown open, not folded.
    local old = c.n
    c.n, c.open = #out, open
    set_lines(buf, row, row + 1 + old, vim.list_extend({ text }, out))
    -- Closed at first in every window showing it (Neovim opens a new fold
    -- once the user has opened another).
    for _, win in ipairs(open and {} or vim.fn.win_findbuf(buf)) do
      vim.api.nvim_win_call(win, function()
        pcall(vim.cmd, (row + 1) .. "foldclose")
      end)
    end
    vim.api.nvim_buf_clear_namespace(buf, hl_ns, row + 1, row + 1 + #out)
    if S.is_search(p) then
      highlight_results(buf, row + 2, out, p.name or p.tool)
    end
    if note then
      vim.api.nvim_buf_set_extmark(buf, hl_ns, row + 1 + note, 0, { end_row = row + 1 + note, end_col = #out[note + 1], hl_group = "CtxlsToolNote" })
    end
  end
  highlight(buf, row, head, text, p.status)
end

-- after_tool reports once whether buf ends with a tool block: the prose
-- that follows starts after a blank line.
function T.after_tool(buf)
  local was = gap[buf]
  gap[buf] = nil
  return was == true
end

-- forget drops buf's calls (its lines are about to be replaced).
function T.forget(buf)
  calls[buf], gap[buf] = nil, nil
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  vim.api.nvim_buf_clear_namespace(buf, hl_ns, 0, -1)
end

-- forget_from drops buf's calls on row and after (the lines from row on
-- are about to be removed: a question asked again in its place).
function T.forget_from(buf, row)
  for id, c in pairs(calls[buf] or {}) do
    local at = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})[1]
    if not at or at >= row then
      vim.api.nvim_buf_del_extmark(buf, ns, c.mark)
      calls[buf][id] = nil
    end
  end
  gap[buf] = nil
  vim.api.nvim_buf_clear_namespace(buf, hl_ns, row, -1)
end

-- edited_from reports whether a call on row or after in buf changed files:
-- an edit_file or create_file of ctxls's own that was done (applied).
function T.edited_from(buf, row)
  for _, c in pairs(calls[buf] or {}) do
    local at = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})[1]
    local p = c.p or {}
    local name = p.name or p.tool
    if at and at >= row and (p.server or "") == "" and (name == "edit_file" or name == "create_file") and p.status == T.status.done then
      return true
    end
  end
  return false
end

-- Folds ----------------------------------------------------------------------

-- levels[buf] = { tick, [lnum] = fold level }, computed once per change.
local levels = {}

local function fold_levels(buf)
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local l = levels[buf]
  if l and l.tick == tick then
    return l
  end
  l = { tick = tick }
  for _, c in pairs(calls[buf] or {}) do
    if c.n > 0 and not c.open then
      local row = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})[1]
      if row then
        l[row + 1] = ">1"
        for i = row + 2, row + 1 + c.n do
          l[i] = "1"
        end
      end
    end
  end
  levels[buf] = l
  return l
end

-- foldexpr: a call's line and its output are one fold.
function T.foldexpr(lnum)
  return fold_levels(vim.api.nvim_get_current_buf())[lnum] or "0"
end

-- foldtext: the call's line, "▸" for closed, and the output's length
-- (its fences left out). A folded line is not wrapped: when it is wider
-- than the window its arguments are cut ("…"), not its status and length.
function T.foldtext()
  local first = vim.fn.getline(vim.v.foldstart):gsub("^▾", "▸", 1)
  local n = vim.v.foldend - vim.v.foldstart - 2
  local tail = string.format("  [%d %s]", n, n == 1 and "line" or "lines")
  local info = vim.fn.getwininfo(vim.api.nvim_get_current_win())[1]
  local over = vim.fn.strdisplaywidth(first .. tail) - (info.width - (info.textoff or 0))
  local a, b = first:find("`[^`]*`")
  if over > 0 and a then
    local args = first:sub(a + 1, b - 1)
    local keep = vim.fn.strchars(args) - over - 1
    args = (keep > 0 and vim.fn.strcharpart(args, 0, keep) or "") .. "…"
    first = first:sub(1, a) .. args .. first:sub(b)
  end
  return first .. tail
end

-- is_call_line reports whether the cursor's line is a call with an output.
function T.is_call_line(buf, lnum)
  return fold_levels(buf)[lnum] == ">1"
end

-- window sets up win, showing a chat buffer, to fold the calls' outputs.
function T.window(win)
  vim.api.nvim_win_call(win, function()
    vim.cmd([[
      setlocal foldmethod=expr foldexpr=v:lua.require'ctxls.tools'.foldexpr(v:lnum)
      setlocal foldtext=v:lua.require'ctxls.tools'.foldtext() foldlevel=0 foldenable
      setlocal fillchars+=fold:\ 
    ]])
  end)
end

-- keys maps <CR> on a call's line to open or close its output, gq on a
-- search's line or results to put them in the quickfix list.
function T.keys(buf)
  vim.keymap.set("n", "<CR>", function()
    return T.is_call_line(buf, vim.fn.line(".")) and "za" or "<CR>"
  end, { buffer = buf, expr = true, desc = "ctxls: show or hide a tool call's output" })
  vim.keymap.set("n", "gq", function()
    T.quickfix(T.call_at(buf, vim.fn.line(".")))
  end, { buffer = buf, desc = "ctxls: a search's results in the quickfix list" })
end

-- Searches ----------------------------------------------------------------------

-- call_at is the call whose line or output holds line lnum (1-based) of
-- buf: its params and its line's row (0-based), or nil.
function T.call_at(buf, lnum)
  for _, c in pairs(calls[buf] or {}) do
    local row = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})[1]
    if row and c.p and lnum - 1 >= row and lnum - 1 <= row + c.n then
      return c.p, row
    end
  end
end

-- last_search is the params of buf's last search with places to go to (a
-- grep's matches, the files find_files found), or nil.
function T.last_search(buf)
  local best, at
  for _, c in pairs(calls[buf] or {}) do
    local row = vim.api.nvim_buf_get_extmark_by_id(buf, ns, c.mark, {})[1]
    local p = c.p
    if row and p and S.is_search(p) and (not at or row > at) and #S.items(p.name or p.tool, p.output) > 0 then
      best, at = p, row
    end
  end
  return best
end

-- quickfix puts the results of the search p (its matches, or the files it
-- found) into the quickfix list, titled by its line, and opens the
-- quickfix window; false, having said why, when there are none.
function T.quickfix(p)
  local name = p and (p.name or p.tool)
  if not p or not S.is_search(p) then
    vim.notify("ctxls: no search here (a grep or find_files line in the chat)", vim.log.levels.INFO)
    return false
  end
  local items = S.items(name, p.output)
  if #items == 0 then
    vim.notify("ctxls: " .. name .. " " .. S.label(name, p.arguments) .. " has no matches or files to list", vim.log.levels.INFO)
    return false
  end
  local _, text = line(p, false)
  vim.fn.setqflist({}, " ", { title = "ctxls: " .. text:gsub("^• ", ""), items = items })
  vim.cmd("botright copen")
  return true
end

-- match_at is the file and line that line lnum of buf names when it is a
-- line of a search's results (grep's "path:LINE: text", find_files'
-- path), or nil.
function T.match_at(buf, lnum)
  local p, row = T.call_at(buf, lnum)
  if not p or not S.is_search(p) or lnum - 1 <= row then
    return nil
  end
  local text = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1] or ""
  if (p.name or p.tool) == "grep" then
    return S.match_at(text)
  elseif (p.name or p.tool) == "find_files" and text ~= "" and not text:find("^```") then
    for _, it in ipairs(S.items("find_files", p.output)) do
      if it.path == text then
        return it.filename, 1
      end
    end
  end
  return nil
end

-- open_match opens file at line lnum in the window the user was in before
-- the chat (else another window with a file, else a new one above).
function T.open_match(file, lnum)
  local target
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  local function usable(win)
    return win ~= 0 and win ~= vim.api.nvim_get_current_win() and vim.bo[vim.api.nvim_win_get_buf(win)].buftype == ""
  end
  if usable(prev) then
    target = prev
  else
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if usable(win) then
        target = win
        break
      end
    end
  end
  if target then
    vim.api.nvim_set_current_win(target)
  else
    vim.cmd("aboveleft split")
  end
  local ok, err = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(file))
  if not ok then
    vim.notify("ctxls: " .. tostring(err), vim.log.levels.WARN)
    return
  end
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(lnum, last)), 0 })
  vim.cmd("normal! zvzz")
end

-- The permission question -------------------------------------------------------

local asking, asked = nil, 0 -- the question on screen (or nil), how many were

-- asking is the permission question on screen (or nil), and how many
-- have been asked (to tell one from the next).
function T.asking()
  return asking, asked
end

-- ask answers window/showMessageRequest: the message and its actions as a
-- numbered list (inputlist: Neovim 0.7's request handlers must answer
-- before they return, and a number and Enter is hard to give by accident).
-- Esc, q, an empty answer or none within timeout seconds (the prompt is
-- closed then, as the daemon gives up too) answer null: the daemon takes
-- that as Deny.
function T.ask(params, timeout)
  local actions = params.actions or {}
  local message = (params.message or ""):gsub("%s*\n%s*", " ")
  if #actions == 0 then
    vim.notify(message, vim.log.levels.INFO)
    return vim.NIL
  end
  local items = { message }
  for i, a in ipairs(actions) do
    table.insert(items, string.format("%d. %s", i, a.title))
  end
  -- The call's line, waiting for the answer, on screen first: its
  -- ctxls/toolCall may come just after the question.
  vim.wait(300, function()
    return next(pending) ~= nil
  end, 10)
  pcall(vim.cmd, "redraw")
  asking, asked = message, asked + 1
  local timer, timed_out = vim.loop.new_timer(), false
  timeout = math.max(timeout or 0, 1)
  timer:start(timeout * 1000, 0, function()
    -- A luv callback: only fast API calls. nvim_input ends the prompt.
    if asking then
      timed_out = true
      vim.api.nvim_input("<Esc>")
    end
  end)
  local ok, choice = pcall(vim.fn.inputlist, items)
  asking = nil
  timer:stop()
  timer:close()
  if timed_out then
    vim.notify(
      string.format("ctxls: no answer within %d s: the question was not answered in time; the call did not run", timeout),
      vim.log.levels.WARN
    )
  end
  if not ok or timed_out or type(choice) ~= "number" or choice < 1 or choice > #actions then
    return vim.NIL
  end
  return actions[choice]
end

-- Stored calls -------------------------------------------------------------------

-- stored_status is the status of a stored call from its result message's
-- status (nil without a result).
function T.stored_status(result)
  if result == nil then
    return nil
  elseif result.status == P.status.declined then
    return T.status.declined
  elseif result.status == P.status.cancelled then
    return T.status.cancelled
  elseif result.status == P.status.error then
    return T.status.failed
  end
  return T.status.done
end

-- stored_calls gives an assistant message's toolCalls (OpenAI's shape,
-- {id, function = {name, arguments}}, or {id, name, arguments}) as
-- ctxls/toolCall params, their results from results (id → the result's
-- message).
function T.stored_calls(message, results)
  local out = {}
  local list = message.toolCalls
  if type(list) == "string" then
    local ok, decoded = pcall(vim.json.decode, list)
    list = ok and decoded or nil
  end
  for _, c in ipairs(type(list) == "table" and list or {}) do
    local f = type(c["function"]) == "table" and c["function"] or c
    local name = f.name or "?"
    local server, tool = T.split_name(name)
    local result = results[c.id]
    local call = {
      id = c.id,
      name = name,
      server = server,
      tool = tool,
      arguments = f.arguments or "",
      status = T.stored_status(result) or "no result",
      output = result and result.content,
    }
    -- The summary is not stored: a search's is read from its output.
    if call.status == T.status.done and S.is_search(call) then
      call.summary = S.summary(name, call.output)
    end
    table.insert(out, call)
  end
  return out
end

return T
