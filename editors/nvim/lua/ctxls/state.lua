-- What the plugin's modules share: the public table (require("ctxls")),
-- the state of its one connection, and how it tells the user things.
-- Loaded first, it requires no other module of the plugin.
local S = {}

-- ctxls is the table require("ctxls") returns (init.lua fills it): the
-- modules call one another's public functions through it, as users and
-- the tests see them, and read the options there (ctxls.config, which
-- setup() replaces).
S.ctxls = {}

-- state is the plugin's one connection:
--   client_id   the LSP client
--   current     the current session's id (nil before the first one)
--   titles      session id → title
--   bufs        session id → its chat buffer
--   turn        the running turn: {token, buf, session, request_id, thinking, done}
--   last_file   the last normal file buffer entered (for :CtxlsAdd from the chat)
--   last_win    the last window entered that shows a file (:CtxlsApplyBlock)
-- creating: the callbacks waiting for a session.new in flight (with_session).
-- told_context: session id → the context last told (applet left out).
-- asking: a :CtxlsAsk is on its way to becoming state.turn.
-- shown: session id → the signature of the stored messages its chat buffer
--   shows (see signature); questions: session id → how many questions it
--   shows; settling: session id → reads of a turn's end in flight (settle);
--   header: session id → what the chat's header line says (header_line).
-- instructions: session id → the project's instructions files its turns
--   give the model ({path, bytes, size, unsaved, cut}), named on the line
--   under the header (instructions_line); instructions_seq: session id →
--   the number of the last read of them asked, or of the turn that told
--   them (a slower read then comes too late to count).
-- images: the images attached for the next question (:CtxlsAttach), each
--   { name, path, url }; image_paths: chat buffer → image name → the file
--   an image shown as asked here was read from.
S.state = { client_id = nil, current = nil, titles = {}, bufs = {}, turn = nil, seq = 0, last_file = nil, last_win = nil, creating = nil, told_context = {}, asking = false, shown = {}, questions = {}, settling = {}, showing = {}, header = {}, model_at = {}, images = {}, image_paths = {}, instructions = {}, instructions_seq = {}, instructions_asked = 0 }

-- builtin_notify: vim.notify is Neovim's own, which echoes on the command
-- line (not a plugin's popup). Neovim's own Lua is built into it: a
-- function of it tells its source as "@vim/_editor.lua" (0.7, 0.10) or
-- not at all, "?" (0.12 strips it); a plugin's tells the file's path.
local function builtin_notify()
  local info = debug.getinfo(vim.notify, "S")
  local source = info and info.source or ""
  return source:find("^@vim/") ~= nil or source == "?" or source == "=?"
end

local function notify(msg, level)
  -- One line: a multi-line message stops the user with Press ENTER.
  msg = "ctxls: " .. tostring(msg):gsub("%s*\n%s*", "; ")
  -- So does one wider than the command line (a provider's error with its
  -- URL): Neovim's own vim.notify gets it cut to fit ("…"); a turn's error
  -- is in its chat whole.
  local room = (vim.v.echospace or (vim.o.columns - 12)) - 1
  if builtin_notify() and room > 20 and vim.fn.strdisplaywidth(msg) > room then
    local n = vim.fn.strchars(msg)
    while n > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(msg, 0, n)) > room - 1 do
      n = n - 1
    end
    msg = vim.fn.strcharpart(msg, 0, n) .. "…"
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

-- error_kind is the kind of an error the daemon answered with (its
-- data.kind, one of P.error_kinds): the plugin decides on it, never on the
-- message, which is for people.
local function error_kind(err)
  return type(err) == "table" and type(err.data) == "table" and err.data.kind or nil
end

S.notify = notify
S.error_kind = error_kind

return S
