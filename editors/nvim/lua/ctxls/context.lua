-- What goes to the model beside the question: the session's relevant
-- files (:CtxlsAdd, :CtxlsDrop, :CtxlsContext), the images attached for the
-- next question and their copies in the session folder, and the model
-- input a question would make (:CtxlsPreview).
local context = {}

local P = require("ctxls.protocol")
local images = require("ctxls.images")
local daemon = require("ctxls.daemon")
local chat = require("ctxls.chat")
local sessions = require("ctxls.sessions")
local S = require("ctxls.state")
local ctxls, state, notify = S.ctxls, S.state, S.notify
local attachable, with_session = daemon.attachable, sessions.with_session
local redraw_status, scratch, thousands = chat.redraw_status, chat.scratch, chat.thousands
local set_instructions, instructions_text = chat.set_instructions, chat.instructions_text

-- context_line sums a context up in one line: "files (2), ports (1)".
local function context_line(ctx)
  local parts = {}
  for name, items in pairs(ctx or {}) do
    if name == "applet" then
      table.insert(parts, "editor view")
    else
      table.insert(parts, string.format("%s (%d)", name, #items))
    end
  end
  table.sort(parts)
  return #parts > 0 and table.concat(parts, ", ") or "empty"
end

-- file_path is the file a command acts on: the one named, else the current
-- buffer's, else (from the chat or another special buffer) the last file.
local function file_path(file)
  if file and file ~= "" then
    return vim.fn.fnamemodify(file, ":p")
  end
  local buf = vim.api.nvim_get_current_buf()
  if not attachable(buf) then
    buf = state.last_file
  end
  if not buf or not vim.api.nvim_buf_is_valid(buf) then
    return nil
  end
  return vim.api.nvim_buf_get_name(buf)
end

function context.add(file)
  local path = file_path(file)
  if not path then
    notify("no file to add: open one, or :CtxlsAdd {file}", vim.log.levels.WARN)
    return
  end
  with_session(function(id)
    ctxls.command(P.commands.context_set, { sessionId = id, setName = "files", items = { path }, mode = "merge" })
  end)
end

function context.drop(file)
  local path = file_path(file)
  ctxls.command(P.commands.context_get, { setName = "files" }, function(r)
    local keep = {}
    for _, f in ipairs((r.context or {}).files or {}) do
      if f ~= path then
        table.insert(keep, f)
      end
    end
    ctxls.command(P.commands.context_set, { setName = "files", items = keep, mode = "replace" })
  end)
end

function context.show_context()
  ctxls.command(P.commands.context_get, {}, function(r)
    local lines = { "# ctxls session context", "" }
    local names = vim.tbl_keys(r.context or {})
    table.sort(names)
    for _, name in ipairs(names) do
      table.insert(lines, name .. ":")
      for _, item in ipairs(r.context[name]) do
        table.insert(lines, "  " .. item)
      end
    end
    if #names == 0 then
      table.insert(lines, "(no context yet: :CtxlsAdd adds the current file)")
    end
    -- The project's instructions files a question would give the model.
    if r.instructions and #r.instructions > 0 then
      table.insert(lines, "")
      table.insert(lines, "instructions:")
      for _, f in ipairs(r.instructions) do
        local note = ""
        if f.cut and f.cut ~= "" then
          note = string.format("  (%s of %s bytes given%s)", thousands(f.bytes), thousands(f.size), f.unsaved and "; unsaved" or "")
        elseif f.unsaved then
          note = "  (unsaved)"
        end
        table.insert(lines, "  " .. f.path .. note)
      end
    end
    local id = state.current
    if id and state.bufs[id] then
      set_instructions(id, r.instructions) -- the chat's line as current
    end
    scratch(lines)
  end)
end

-- Images ----------------------------------------------------------------------

-- attach_image adds the image file at path to the next question; with
-- bang it takes that one back (every one without a path). Without either
-- it says which go.
function context.attach_image(path, bang)
  path = path and vim.trim(path) or ""
  if bang then
    if path == "" then
      state.images = {}
      notify("no image goes with the next question")
    else
      local full, keep = vim.fn.fnamemodify(vim.fn.expand(path), ":p"), {}
      for _, im in ipairs(state.images) do
        if im.path ~= full and im.name ~= path then
          table.insert(keep, im)
        end
      end
      if #keep == #state.images then
        notify(path .. " is not attached", vim.log.levels.WARN)
      end
      state.images = keep
    end
    redraw_status()
    return
  end
  if path == "" then
    if #state.images == 0 then
      notify("no image goes with the next question; :CtxlsAttach {file} attaches one")
    else
      notify("the next question goes with " .. images.label(state.images) .. " (:CtxlsAttach! takes them back)")
    end
    return
  end
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  for _, im in ipairs(state.images) do
    if im.path == full then
      notify(im.name .. " is attached already")
      return
    end
  end
  if #state.images >= images.max_images then
    notify(string.format("a question may carry %d images; :CtxlsAttach! {file} takes one back", images.max_images), vim.log.levels.WARN)
    return
  end
  local im, err = images.read(full)
  if not im then
    notify(err, vim.log.levels.ERROR)
    return
  end
  table.insert(state.images, im)
  redraw_status()
end

-- attached are the names of the images attached for the next question.
function context.attached()
  return vim.tbl_map(function(im)
    return im.name
  end, state.images)
end

-- open_image opens the image whose line the cursor is on in a chat: the
-- file it was read from when asked here, else its copy in the session
-- folder's sources/.
function context.open_image()
  local buf = vim.api.nvim_get_current_buf()
  local name = images.name_at(vim.fn.getline("."))
  if not name then
    return
  end
  local from = (state.image_paths[buf] or {})[name]
  if from and vim.loop.fs_stat(from) then
    return images.open(from, ctxls.config)
  end
  local ok, id = pcall(vim.api.nvim_buf_get_var, buf, "ctxls_session")
  if not ok then
    return
  end
  ctxls.command(P.commands.session_show, { sessionId = id }, function(r)
    local path = r.session.folder .. "/sources/" .. name
    if not vim.loop.fs_stat(path) then
      notify(name .. " is no longer in the session folder (" .. r.session.folder .. "/sources)", vim.log.levels.WARN)
      return
    end
    images.open(path, ctxls.config)
  end)
end

-- preview shows the model input of a turn (ctxls.chat.preview), read-only.
-- preview shows the model input message would be sent with, the file in
-- front of you (opts.range, opts.bang: as for :CtxlsAsk) included.
function context.preview(message, opts)
  opts = opts or {}
  -- Taken now: the prompt below may be answered elsewhere.
  local file = opts.file
  if file == nil then
    file = ctxls.turn_file(opts) or false
  end
  if not message or message == "" then
    vim.ui.input({ prompt = "Preview the prompt for" .. (file and " (with " .. file.label .. ")" or "") .. ": " }, function(m)
      if m and m ~= "" then
        ctxls.preview(m, { file = file })
      end
    end)
    return
  end
  local params = { message = message, sessionId = state.current, files = file and { file.item } or nil }
  ctxls.command(P.commands.chat_preview, params, function(r)
    local t = r.tokens or {}
    local lines = {
      string.format("# Model input for %s (nothing sent)", r.model or "?"),
      string.format("Tokens: %d of %d — system %d (files %d), history %d", t.total or 0, r.budget or 0, t.system or 0, t.files or 0, t.history or 0),
    }
    -- Their text ends the system message below.
    local given = instructions_text(r.instructions)
    if given then
      table.insert(lines, "Instructions: " .. given)
    end
    for _, m in ipairs(r.messages or {}) do
      table.insert(lines, "")
      table.insert(lines, "## " .. m.role)
      table.insert(lines, "")
      vim.list_extend(lines, vim.split(m.content or "", "\n", { plain = true }))
    end
    local names = {}
    for _, tool in ipairs(r.tools or {}) do
      table.insert(names, tool.name)
    end
    vim.list_extend(lines, { "", "## tools", "", table.concat(names, ", ") })
    scratch(lines, "ctxls://preview/" .. state.seq)
  end)
end

context.context_line = context_line

return context
