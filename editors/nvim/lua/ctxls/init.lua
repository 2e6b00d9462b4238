-- ctxls for Neovim: a thin client over the ctxls daemon's LSP protocol.
-- Works on Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).
--
-- This file sets up: the options (setup()), the autocommands, and the
-- public table, require("ctxls"), whose functions the user commands
-- (plugin/ctxls.lua), the chat's mappings and the tests call. The work is
-- done in the modules beside it:
--   state      what they share: this table, the connection's state, notify
--   daemon     the connection: the daemon started, the LSP client, requests
--   handlers   what the daemon sends: progress, tool calls, questions, edits
--   chat       the chat buffers: header, streamed text, history, status line
--   turn       a question asked, its answer streamed, cancelled
--   compose    the compose window (:CtxlsChat), :CtxlsRetry, :CtxlsEdit
--   sessions   picked, resumed, searched, renamed, compacted, deleted, exported
--   context    relevant files, attached images, :CtxlsContext, :CtxlsPreview
-- and review, edits, tools, search, questions, firstrun, history, mentions,
-- images, diagnostics, key (each says what it does at its top).
local S = require("ctxls.state")
local M = S.ctxls
local state = S.state

-- The provider's key from setup() (provider.api_key).
local key = require("ctxls.key")
local daemon = require("ctxls.daemon")
local chat = require("ctxls.chat")
local turn = require("ctxls.turn")
local compose = require("ctxls.compose")
local sessions = require("ctxls.sessions")
local context = require("ctxls.context")
-- Loaded now, as before the daemon starts: it gives the reviews and the
-- questions their hooks into the chat.
require("ctxls.handlers")
-- The model's tool calls in the chat.
local tools = require("ctxls.tools")
-- The daemon's questions (tool permission, workspace trust) in the chat.
local questions_ui = require("ctxls.questions")
-- The model's searches of the workspace: their results, the quickfix list.
local search = require("ctxls.search")
-- The model's edits: reviewed in a diff tab, applied to the buffers.
local review = require("ctxls.review")
local edits = require("ctxls.edits")
-- What to say when no provider is usable, and :CtxlsSetup.
local firstrun = require("ctxls.firstrun")

local key_spec, settings, renew_key = daemon.key_spec, daemon.settings, daemon.renew_key
local client_notify, attachable = daemon.client_notify, daemon.attachable
local refresh, refresh_instructions, image_highlight = chat.refresh, chat.refresh_instructions, chat.image_highlight

M.config = {
  cmd = { "ctxls", "serve" },
  -- { baseURL, model, api, apiKeyEnv, titleModel, contextWindow,
  -- maxOutputTokens, api_key }. api_key: the provider's key, best
  -- "cmd:pass show openai" (a command that prints it) or a function that
  -- returns it; looked up when the daemon starts and given to it alone, in
  -- its environment (:help ctxls-key). nil: the daemon reads
  -- OPENAI_API_KEY (or apiKeyEnv) from Neovim's environment.
  provider = nil,
  data_dir = nil,
  -- When a turn summarises the session's earlier turns: the input's share
  -- of the window in percent (80, or "80%"), or "off"; nil: the daemon's
  -- default (80). :CtxlsCompact summarises now.
  compact_at = nil,
  debounce = 50, -- ms between didChange notifications
  -- The daemon's log (its stderr would be shown as [ERROR] lines in the LSP
  -- log): --log-file is added to cmd unless cmd names one. false: no file.
  log_file = vim.fn.stdpath("cache") .. "/ctxls.log",
  -- MCP servers whose tools the model may call, in Claude Code's .mcp.json
  -- format: { NAME = { command = "...", args = { ... }, env = { ... } } }.
  -- Each call is asked first (:help ctxls-tools).
  mcp_servers = nil,
  allow_read_only_tools = nil, -- true: tools their server says change nothing run unasked
  tool_permission_timeout_seconds = nil, -- no answer within it denies (nil: 120)
  -- :CtxlsAsk sends the file in front of you (its current text, unsaved
  -- edits included) with the question, and the lines of a range
  -- (:'<,'>CtxlsAsk). false: only the session's relevant files go
  -- (:CtxlsAsk! leaves the file out once).
  send_active_file = true,
  -- true: :CtxlsAsk moves the cursor into the chat window.
  focus_chat = false,
  -- How Enter (or gf) on an image's line in the chat opens the image:
  -- function(path); nil: the system's viewer (xdg-open, open), else a buffer.
  open_image = nil,
  -- The project's instructions files (AGENTS.md at the workspace's root and
  -- in the folders of the files a turn involves; else CLAUDE.md or
  -- .github/copilot-instructions.md) go to the model, named in the chat
  -- under its header. false: none go. setup() again changes it while the
  -- daemon runs, from the next turn.
  project_instructions = true,
}

-- helptags makes :help ctxls work right after the plugin is put on the
-- runtimepath: doc/tags is generated when missing or older than the help.
local function helptags()
  local src = debug.getinfo(1, "S").source:sub(2) -- .../lua/ctxls/init.lua
  local doc = vim.fn.fnamemodify(src, ":h:h:h") .. "/doc"
  local help, tags = doc .. "/ctxls.txt", doc .. "/tags"
  if vim.fn.filereadable(help) == 1 and vim.fn.getftime(tags) < vim.fn.getftime(help) then
    pcall(vim.cmd, "silent helptags " .. vim.fn.fnameescape(doc))
  end
end

function M.setup(opts)
  local spec_before, name_before = key_spec(), key.env_name(M.config.provider)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  helptags()
  -- Called again with another key (or where it goes) while the daemon
  -- runs: the daemon gets the new one (it reads it from its environment),
  -- started again now, or, while a turn runs, before the next question.
  local rekeyed = M.client() and (key_spec() ~= spec_before or key.env_name(M.config.provider) ~= name_before)
  local restarted = false
  if rekeyed and (state.turn or state.asking) then
    state.key_recheck = true
  elseif rekeyed then
    restarted = renew_key()
  end
  -- Called again while the daemon runs: the settings it takes then go to
  -- it (from its next turn), and the chats name the instructions files
  -- that now go.
  local client = M.client()
  if client and not restarted then -- (a daemon started now has them)
    client.config.settings = settings()
    if client.settings then
      client.settings = client.config.settings -- (0.11: what workspace/configuration reads)
    end
    client_notify(client, "workspace/didChangeConfiguration", { settings = client.config.settings })
    for id in pairs(state.bufs) do
      refresh_instructions(id)
    end
  end
  local group = vim.api.nvim_create_augroup("ctxls", { clear = true })
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = image_highlight })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    callback = function(a)
      M.attach(a.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "CursorHold", "BufEnter" }, {
    group = group,
    callback = function()
      M.view()
    end,
  })
  -- Turns made elsewhere on the same sessions: the daemon says so with
  -- ctxls/sessionUpdated (PostgreSQL, and SQLite since it looks every half
  -- second); the chat is also read again when you come back to Neovim or
  -- enter it (a daemon too old to tell).
  vim.api.nvim_create_autocmd("FocusGained", {
    group = group,
    callback = function()
      for id in pairs(state.bufs) do
        refresh(id)
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(a)
      local ok, id = pcall(vim.api.nvim_buf_get_var, a.buf, "ctxls_session")
      if ok and id then
        refresh(id)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ "WinEnter", "BufEnter" }, {
    group = group,
    callback = function()
      if attachable(vim.api.nvim_get_current_buf()) then
        state.last_win = vim.api.nvim_get_current_win()
      end
    end,
  })
  -- On the way out Neovim's own exit handler asks the daemon to shut down;
  -- from 0.10 Neovim then quits without waiting for it to end (0.7 waits
  -- up to half a second): the daemon may still be writing its data folder,
  -- and Neovim may die of SIGPIPE, writing to it once it has gone while
  -- Neovim tears down. Wait for it here as 0.7 does. (vim.lsp is loaded
  -- first, so its handler, which sends the shutdown, runs before this.)
  local _ = vim.lsp
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      if M.client() then
        vim.wait(500, function()
          return M.client() == nil
        end, 10)
      end
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

-- The public API ----------------------------------------------------------------

-- The connection (ctxls.daemon).
M.client = daemon.client
M.command = daemon.command
M.resolve_cmd = daemon.resolve_cmd
M.ensure_client = daemon.ensure_client
M.attach = daemon.attach
M.view = daemon.view

-- Turns (ctxls.turn) and the compose window (ctxls.compose).
M.turn_file = turn.turn_file
M.ask = turn.ask
M.cancel = turn.cancel
M.compose_status = compose.compose_status
M.send_compose = compose.send_compose
M.chat = compose.chat
M.retry = compose.retry
M.edit = compose.edit

-- What a status line shows (ctxls.chat).
M.title = chat.title
M.busy = chat.busy
M.statusline = chat.statusline

-- Sessions (ctxls.sessions).
M.show = sessions.show
M.ago = sessions.ago
M.session_item = sessions.session_item
M.sessions = sessions.sessions
M.search = sessions.search
M.new_session = sessions.new_session
M.rename = sessions.rename
M.regenerate_title = sessions.regenerate_title
M.compact = sessions.compact
M.delete = sessions.delete
M.model = sessions.model
M.set_model = sessions.set_model
M.summary = sessions.summary
M.export = sessions.export

-- Context (ctxls.context).
M.add = context.add
M.drop = context.drop
M.show_context = context.show_context
M.attach_image = context.attach_image
M.attached = context.attached
M.open_image = context.open_image
M.preview = context.preview

-- The model's searches in the chat (ctxls.search).
M.open_match = search.open_match
M.quickfix = search.quickfix

-- :CtxlsSetup (ctxls.firstrun).
M.setup_view = firstrun.setup_view

-- The model's edits -----------------------------------------------------------

-- decide answers the edit shown for review: P.review_decision.accept,
-- accept_all or reject (:CtxlsAccept, :CtxlsAcceptAll, :CtxlsReject).
function M.decide(decision)
  review.decide_shown(decision)
end

-- open_review shows the oldest edit waiting for review (:CtxlsReview).
function M.open_review()
  review.open()
end

-- reviewing is the edit shown for review (ctxls/reviewEdit's params, or
-- nil), how many wait, and how many have been decided.
M.reviewing = review.state

-- review_mode sets how the session's edits are reviewed (ctxls.review).
M.review_mode = review.review_mode

-- undo and redo take a turn's file changes back and apply them again;
-- apply_block puts a chat's code block into a file (ctxls.edits).
M.undo = edits.undo
M.redo = edits.redo
M.apply_block = edits.apply_block

-- asking is the permission question a daemon too old for ctxls/question
-- has on screen (or nil), and how many it asked.
M.asking = tools.asking

-- questions are the daemon's open questions (ctxls/question params, oldest
-- first), how many were asked, and the closed ones' outcomes by id.
M.questions = questions_ui.state

-- answer is :CtxlsAnswer ACTION: the newest open question offering ACTION
-- gets it (allow, deny, always, trust, distrust).
M.answer = questions_ui.command
M.answer_complete = questions_ui.complete

return M
