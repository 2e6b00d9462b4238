-- The model's edits, reviewed (ctxls/reviewEdit).
--
-- An edit that comes for review never takes the keyboard: the user may be
-- typing, and a review's keys are ordinary keys ("ga" in "gamma" would
-- accept it unseen). It is announced (a notification; the call's line in
-- the chat waits; the quickfix list) and waits until the user opens it
-- with :CtxlsReview. Then it is shown in a new tab: the file's current text
-- (the buffer's, unsaved edits included) on the left and the proposed text
-- on the right, in diff mode, in scratch buffers. ga accepts it, gA accepts
-- it and the rest of the turn's edits, gr rejects it (also :CtxlsAccept,
-- :CtxlsAcceptAll, :CtxlsReject); closing the tab, or either of its
-- windows, rejects it. The daemon then applies an accepted edit with
-- workspace/applyEdit (ctxls.edits): nothing here changes the file.
local R = {}

local P = require("ctxls.protocol")
local D = P.review_decision
-- The answer is sent when the user decides (ctxls.later).
local later = require("ctxls.later")
local S = require("ctxls.state")
local ctxls, notify = S.ctxls, S.notify
local with_session = require("ctxls.sessions").with_session

-- Reviews -------------------------------------------------------------------

-- reviews: the edits waiting for the user's decision, oldest first. Each:
--   params  ctxls/reviewEdit's params
--   reply   sends the answer to the daemon
--   n       its number (unique)
--   tab, prev_tab, bufs, wins   while shown (opened with :CtxlsReview)
--   timer   rejects it when the daemon stops waiting
local reviews = {}
local seq = 0
-- env: the chat a review's line shows in (buf_for(params)) and keeping
-- its window at the end (follow(buf)); set by ctxls.handlers.
local env = {}
local line_ns = vim.api.nvim_create_namespace("ctxls_review_lines")

function R.setup(e)
  env = e
end
local shown = nil -- the review on screen
local qf_id = nil -- our quickfix list's id
local answered = 0 -- how many reviews have been decided (for tests)

-- first_changed is the first line (1-based) where two texts differ.
local function first_changed(old, new)
  local a = vim.split(old or "", "\n", { plain = true })
  local b = vim.split(new or "", "\n", { plain = true })
  for i = 1, math.max(#a, #b) do
    if a[i] ~= b[i] then
      return i
    end
  end
  return 1
end

-- lines_of splits a text into lines, its final newline left out.
local function lines_of(text)
  text = text or ""
  if text:sub(-1) == "\n" then
    text = text:sub(1, -2)
  end
  return vim.split(text, "\n", { plain = true })
end

local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

-- what is an edit in words: "edit main.go (+1 −1 lines)".
local function what(p)
  return string.format("%s %s (%s)", p.create and "create" or "edit", relative(p.path), p.summary or "")
end

-- update_qf lists the edits waiting in our quickfix list (made the first
-- time, replaced after: the user's own lists are left alone).
local function update_qf()
  local items = {}
  for _, r in ipairs(reviews) do
    table.insert(items, {
      filename = r.params.path,
      lnum = first_changed(r.params.oldText, r.params.newText),
      col = 1,
      text = string.format("ctxls: %s%s", what(r.params), r == shown and " — shown: ga accept, gA accept all, gr reject" or " — waiting: :CtxlsReview shows it"),
    })
  end
  local title = #items > 0 and string.format("ctxls: %d %s to review", #items, #items == 1 and "edit" or "edits") or "ctxls: no edits to review"
  if qf_id and vim.fn.getqflist({ id = qf_id }).id == qf_id then
    vim.fn.setqflist({}, "r", { id = qf_id, items = items, title = title })
  elseif #items > 0 then
    vim.fn.setqflist({}, " ", { items = items, title = title })
    qf_id = vim.fn.getqflist({ id = 0 }).id
  end
end

-- say shows a one-line notice, cut to the room the command line has
-- (a longer one would stop the user with Press ENTER).
local function say(msg, level)
  local room = vim.v.echospace or 0
  if room > 10 and vim.fn.strdisplaywidth(msg) > room then
    msg = vim.fn.strcharpart(msg, 0, room - 1) .. "…"
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

local function esc(s)
  return (s:gsub("%%", "%%%%"))
end

-- close_view closes a review's tab (its scratch buffers go with it) and
-- goes back to the tab it was opened from.
local function close_view(r)
  if shown == r then
    shown = nil
  end
  -- Back to the tab the review came from if the user was looking at the
  -- review (or closed it): not if they had gone elsewhere meanwhile.
  local back = not (r.tab and vim.api.nvim_tabpage_is_valid(r.tab)) or vim.api.nvim_get_current_tabpage() == r.tab
  if r.tab and vim.api.nvim_tabpage_is_valid(r.tab) then
    if #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(r.tab))
    else
      -- The only tab: leave it with the file instead of the diff.
      for _, win in ipairs(vim.api.nvim_tabpage_list_wins(r.tab)) do
        pcall(vim.api.nvim_win_call, win, function()
          vim.cmd("diffoff")
        end)
      end
      pcall(vim.cmd, "only")
      pcall(vim.cmd, "enew")
    end
  end
  for _, b in ipairs(r.bufs or {}) do
    if vim.api.nvim_buf_is_valid(b) then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  if back and r.prev_tab and vim.api.nvim_tabpage_is_valid(r.prev_tab) then
    vim.api.nvim_set_current_tabpage(r.prev_tab)
  end
  r.tab, r.bufs, r.wins = nil, nil, nil
end

local show -- forward
local chosen_text -- forward

local function set_chat_lines(buf, first, last, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
end

local outcomes = {
  [D.accept] = "accepted",
  [D.accept_all] = "accepted, and the rest of the turn's edits",
  [D.reject] = "rejected",
  part = "accepted in part",
}

-- chosen_text is the proposal's buffer as text: what the user chose of
-- the edit (newText with the changes left out with gs taken back).
chosen_text = function(r)
  local lines = vim.api.nvim_buf_get_lines(r.bufs[2], 0, -1, false)
  local t = table.concat(lines, "\n")
  if (r.params.newText or ""):sub(-1) == "\n" then
    t = t .. "\n"
  end
  return t
end

-- announce puts a review's line at the end of its session's chat (the
-- chat does not take the focus either): what the edit is and how to see
-- it.
local function announce(r)
  local buf = env.buf_for and env.buf_for(r.params)
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local last = vim.api.nvim_buf_line_count(buf)
  local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ""
  local text = string.format("> _ctxls: the model wants to %s · :CtxlsReview shows it_", what(r.params))
  local row
  if tail ~= "" then
    set_chat_lines(buf, last, last, { "", text, "" })
    row = last + 1
  else
    set_chat_lines(buf, last - 1, last, { text, "" })
    row = last - 1
  end
  vim.api.nvim_buf_add_highlight(buf, line_ns, "WarningMsg", row, 0, -1)
  r.line = { buf = buf, mark = vim.api.nvim_buf_set_extmark(buf, line_ns, row, 0, { right_gravity = false }) }
  if env.follow then
    env.follow(buf)
  end
end

-- settle makes a review's chat line say what became of it.
local function settle(r, decision)
  if r.partly then
    decision = "part"
  end
  local l = r.line
  if not (l and vim.api.nvim_buf_is_valid(l.buf)) then
    return
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(l.buf, line_ns, l.mark, {})[1]
  if row then
    local text = string.format("> _ctxls reviewed: %s → %s_", what(r.params), outcomes[decision] or "no decision")
    set_chat_lines(l.buf, row, row + 1, { text })
    vim.api.nvim_buf_clear_namespace(l.buf, line_ns, row, row + 1)
    vim.api.nvim_buf_add_highlight(l.buf, line_ns, "Comment", row, 0, -1)
  end
  r.line = nil
end

-- decide answers a review (decision: accept, acceptAll, reject, or nil
-- for no answer), closes it and shows the next.
local function decide(r, decision)
  if r.done then
    return
  end
  r.done = true
  answered = answered + 1
  for i, x in ipairs(reviews) do
    if x == r then
      table.remove(reviews, i)
      break
    end
  end
  if r.timer then
    r.timer:stop()
    r.timer:close()
    r.timer = nil
  end
  local answer = vim.NIL
  if decision then
    answer = { decision = decision }
    -- Some changes left out (gs): the text chosen, in place of newText.
    local chosen = r.bufs and r.bufs[2] and vim.api.nvim_buf_is_valid(r.bufs[2]) and decision ~= D.reject and chosen_text(r)
    if chosen and chosen ~= r.params.newText then
      answer.text = chosen
      r.partly = chosen ~= r.params.oldText
      if not r.partly then
        decision = D.reject -- every change left out: the daemon counts it so
      end
    end
  end
  pcall(r.reply, answer)
  pcall(settle, r, decision)
  -- The next edit waiting is shown in its place only when the user was
  -- looking at this one and decided it: they are reviewing, in the review
  -- tab, in Normal mode. Otherwise it waits to be opened.
  local reviewing = r.tab and vim.api.nvim_tabpage_is_valid(r.tab) and vim.api.nvim_get_current_tabpage() == r.tab
  close_view(r)
  if decision and reviewing and reviews[1] and not reviews[1].sync then
    show(reviews[1])
  elseif decision and not reviews[1] then
    pcall(vim.cmd, 'echo ""') -- the question answered leaves the command line
  end
  update_qf()
  pcall(vim.cmd, "redraw")
end

-- scratch makes a review buffer holding text, named name, its filetype
-- that of path.
local function scratch(name, text, path)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, name)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines_of(text))
  vim.api.nvim_buf_set_option(b, "bufhidden", "wipe")
  vim.api.nvim_buf_set_option(b, "modifiable", false)
  vim.api.nvim_buf_call(b, function()
    pcall(vim.cmd, "silent doautocmd filetypedetect BufRead " .. vim.fn.fnameescape(path))
  end)
  return b
end

-- keys maps the review's keys in buf, and makes closing it reject
-- (unless keep_open: the header).
local function keys(r, b, keep_open)
  local function map(lhs, decision, desc)
    vim.keymap.set("n", lhs, function()
      decide(r, decision)
    end, { buffer = b, nowait = true, desc = "ctxls: " .. desc })
  end
  map("ga", D.accept, "accept this edit")
  map("gA", D.accept_all, "accept this edit and the rest of the turn's")
  map("gr", D.reject, "reject this edit")
  -- gs leaves the change under the cursor out of the proposal (the current
  -- text's lines taken back into it: diffget there, diffput from the
  -- current text); u takes that back. ga then accepts what is left.
  vim.keymap.set("n", "gs", function()
    local wins = r.wins or {}
    local cur = vim.api.nvim_get_current_win()
    if cur == wins[2] then
      pcall(vim.cmd, "diffget")
    elseif cur == wins[1] then
      pcall(vim.cmd, "diffput")
    end
  end, { buffer = b, nowait = true, desc = "ctxls: leave this change out of the edit" })
  if keep_open then
    return
  end
  vim.api.nvim_create_autocmd({ "BufWipeout", "BufHidden" }, {
    buffer = b,
    once = true,
    callback = function()
      if not r.done then
        vim.schedule(function()
          decide(r, D.reject)
        end)
      end
    end,
  })
end

-- show opens a review's tab: the current text beside the proposed one.
-- Only on the user's word (:CtxlsReview, a decision in the review tab, or
-- the fallback that must ask at once).
show = function(r)
  if r.tab or r.done then
    return
  end
  shown = r
  if vim.api.nvim_get_mode().mode:sub(1, 1) == "i" then
    vim.cmd("stopinsert") -- the review's keys are normal-mode keys
  end
  local p = r.params
  local name = relative(p.path)
  r.prev_tab = vim.api.nvim_get_current_tabpage()
  local current = scratch(string.format("ctxls-review://%d/current/%s", r.n, name), p.oldText, p.path)
  local proposed = scratch(string.format("ctxls-review://%d/proposed/%s", r.n, name), p.newText, p.path)
  -- The proposal may lose changes (gs, diffget): it is what ga accepts.
  vim.api.nvim_buf_set_option(proposed, "modifiable", true)
  r.bufs = { current, proposed }
  vim.cmd("tab sbuffer " .. current)
  r.tab = vim.api.nvim_get_current_tabpage()
  local left = vim.api.nvim_get_current_win()
  vim.cmd("rightbelow vertical sbuffer " .. proposed)
  local right = vim.api.nvim_get_current_win()
  local file = require("ctxls.edits").find_buf(p.path)
  local unsaved = file and vim.api.nvim_buf_is_loaded(file) and vim.api.nvim_buf_get_option(file, "modified")
  local source = p.create and "new file" or (unsaved and "now, unsaved edits included" or "now")
  -- Typed in since the edit was made: this side is the text then; the
  -- daemon makes the edit where its text now is when it is accepted.
  if not p.create and file and vim.api.nvim_buf_is_loaded(file) then
    local now = table.concat(vim.api.nvim_buf_get_lines(file, 0, -1, false), "\n")
    if vim.api.nvim_buf_get_option(file, "eol") then
      now = now .. "\n"
    end
    if now ~= p.oldText and now .. "\n" ~= p.oldText then
      source = "when the edit was made (changed since)"
    end
  end
  vim.api.nvim_win_set_option(left, "statusline", " " .. esc(name) .. " — " .. source)
  vim.api.nvim_win_set_option(right, "statusline", " " .. esc(name) .. " — proposed by the model")
  for _, win in ipairs({ left, right }) do
    vim.api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
    vim.api.nvim_win_set_option(win, "wrap", false)
    vim.api.nvim_win_set_option(win, "foldlevel", 99) -- the whole file, changes highlighted
  end
  -- A line across the top says what the edit is; its status line, the keys.
  local head = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(head, 0, -1, false, { string.format("ctxls: the model wants to %s", what(p)) })
  vim.api.nvim_buf_set_option(head, "bufhidden", "wipe")
  vim.api.nvim_buf_set_option(head, "modifiable", false)
  table.insert(r.bufs, head)
  vim.cmd("topleft sbuffer " .. head)
  local top = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_height(top, 1)
  for option, value in pairs({ winfixheight = true, number = false, relativenumber = false, signcolumn = "no", wrap = false,
    statusline = " ga accept · gA accept all in this turn · gr reject · gs leave a change out · closing the tab rejects" }) do
    vim.api.nvim_win_set_option(top, option, value)
  end
  vim.api.nvim_buf_add_highlight(head, -1, "Title", 0, 0, -1)
  vim.api.nvim_set_current_win(right)
  r.wins = { left, right, top }
  keys(r, current)
  keys(r, proposed)
  keys(r, head, true)
  -- The cursor on the first change, in the proposed text.
  local row = math.min(first_changed(p.oldText, p.newText), vim.api.nvim_buf_line_count(proposed))
  pcall(vim.api.nvim_win_set_cursor, right, { row, 0 })
  vim.api.nvim_win_call(right, function()
    vim.cmd("normal! zz")
  end)
  say(string.format("ctxls: the model wants to %s: ga accept, gA accept all, gr reject", what(p)))
end

-- ask_now is the fallback where the handler cannot answer later: the diff
-- is shown and the question asked at once with a numbered list.
local function ask_now(r)
  r.sync = true
  table.insert(reviews, r)
  update_qf()
  show(r)
  pcall(vim.cmd, "redraw")
  local choice = vim.fn.inputlist({
    string.format("ctxls: the model wants to %s. Apply it?", what(r.params)),
    "1. Accept",
    "2. Accept all in this turn",
    "3. Reject",
  })
  local result
  r.reply = function(x)
    result = x
  end
  decide(r, ({ D.accept, D.accept_all, D.reject })[choice])
  return result
end

-- request answers ctxls/reviewEdit: the edit is shown (or waits for the
-- one on screen) and answered when the user decides; no decision within
-- timeout seconds (the daemon's wait) rejects it.
function R.request(params, timeout)
  seq = seq + 1
  local r = { params = params, n = seq }
  local how, reply = later.later()
  if not how then
    return ask_now(r)
  end
  r.reply = reply
  table.insert(reviews, r)
  r.timer = vim.loop.new_timer()
  r.timer:start(math.max(timeout or 0, 1) * 1000, 0, vim.schedule_wrap(function()
    if not r.done then
      say(string.format("ctxls: no decision within %d s: the edit of %s is rejected", timeout, relative(params.path)), vim.log.levels.WARN)
      decide(r, nil)
    end
  end))
  -- Announced, not shown: the keyboard stays where it is.
  pcall(announce, r)
  update_qf()
  -- (The command first: a narrow command line cuts the end.)
  say(string.format("ctxls: to review (:CtxlsReview): %s", what(params)))
  pcall(vim.cmd, "redraw")
  if how == "yield" then
    return coroutine.yield()
  end
  return vim.NIL -- dropped: the answer is sent later
end

-- open shows the oldest edit waiting for review (or brings the one shown
-- back into view): :CtxlsReview, the user's own act.
function R.open()
  if shown and shown.tab and vim.api.nvim_tabpage_is_valid(shown.tab) then
    vim.api.nvim_set_current_tabpage(shown.tab)
    return
  end
  local r = reviews[1]
  if not r then
    say("ctxls: no edit is waiting for review")
    return
  end
  show(r)
  update_qf()
end

-- decide_shown answers the review on screen (the :Ctxls commands).
-- An edit is accepted only once it has been seen: with none shown,
-- :CtxlsAccept and :CtxlsAcceptAll open the oldest instead (rejecting
-- needs no look).
function R.decide_shown(decision)
  local r = shown or reviews[1]
  if not r then
    say("ctxls: no edit is waiting for review")
    return
  end
  if not shown and decision ~= D.reject then
    R.open() -- (it says which keys decide: one message, no Press ENTER)
    return
  end
  decide(r, decision)
end

-- end_session drops the reviews of a session whose turn ended (the
-- daemon no longer waits for them: the turn was cancelled, or failed).
function R.end_session(session_id)
  for _, r in ipairs(vim.list_slice(reviews, 1, #reviews)) do
    if r.params.sessionId == session_id and not r.sync then
      decide(r, nil)
    end
  end
end

-- state is the review on screen (its params, or nil), how many wait and
-- how many have been decided: for the statusline and tests.
function R.state()
  return shown and shown.params or nil, #reviews, answered
end

-- windows are the review's windows: the current text's, the proposed
-- text's and the header's; nil when none is shown.
function R.windows()
  if not (shown and shown.tab and vim.api.nvim_tabpage_is_valid(shown.tab)) then
    return nil
  end
  return shown.wins
end

-- The review mode ---------------------------------------------------------------

-- mode_words: what each review mode means, as :CtxlsReviewMode says it.
local mode_words = {
  [P.review_mode.ask] = "each edit is shown as a diff for you to accept",
  [P.review_mode.auto] = "edits are applied at once (u undoes them)",
  [P.review_mode.off] = "the model cannot edit files",
}

-- review_mode sets how the session's edits are reviewed: ask, auto or off
-- (picked from a list when not given).
function R.review_mode(mode)
  if not mode or mode == "" then
    vim.ui.select({ P.review_mode.ask, P.review_mode.auto, P.review_mode.off }, {
      prompt = "Review the model's edits",
      format_item = function(m)
        return m .. ": " .. mode_words[m]
      end,
    }, function(m)
      if m then
        ctxls.review_mode(m)
      end
    end)
    return
  end
  if not mode_words[mode] then
    notify("the review mode is ask, auto or off", vim.log.levels.WARN)
    return
  end
  with_session(function(id)
    ctxls.command(P.commands.session_set_review_mode, { sessionId = id, mode = mode }, function()
      notify("review mode " .. mode .. ": " .. mode_words[mode])
    end)
  end)
end

return R
