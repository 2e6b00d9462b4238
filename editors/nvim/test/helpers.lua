-- What the headless test scripts share. Each loads it beside itself:
--   local h = dofile(debug.getinfo(1, "S").source:sub(2):match("^(.*/)") .. "helpers.lua")(label)
-- label names the script or phase in a failure (nil: none). h.messages is
-- where the script's vim.notify puts the notifications it is shown.
return function(label)
  local h = { messages = {} }

  -- start loads the plugin as a user's config does, puts its notifications
  -- in h.messages, and sets it up against the test's daemon and fake
  -- provider (CTXLS_BIN, CTXLS_DATA_DIR, OPENAI_BASE_URL), opts over those;
  -- it returns the plugin.
  function h.start(opts)
    vim.cmd("runtime plugin/ctxls.lua")
    local ctxls = require("ctxls")
    vim.notify = function(msg)
      table.insert(h.messages, msg)
    end
    ctxls.setup(vim.tbl_extend("force", {
      cmd = { os.getenv("CTXLS_BIN"), "serve", "--data-dir", os.getenv("CTXLS_DATA_DIR") },
      provider = { baseURL = os.getenv("OPENAI_BASE_URL"), model = "test-model" },
    }, opts or {}))
    return ctxls
  end

  -- fail reports msg with the notifications so far and quits Neovim with 1.
  function h.fail(msg)
    local head = label and ("FAIL (" .. label .. "): ") or "FAIL: "
    io.stderr:write(head .. msg .. "\nnotifications:\n" .. table.concat(h.messages, "\n---\n") .. "\n")
    vim.cmd("cquit 1")
  end

  -- wait waits for cond (10 s unless ms), and fails naming what.
  function h.wait(what, cond, ms)
    if not vim.wait(ms or 10000, cond, 20) then
      h.fail("timed out waiting for " .. what)
    end
  end

  function h.text(buf)
    return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  end

  -- has reports whether buf's text holds s.
  function h.has(buf, s)
    return h.text(buf):find(s, 1, true) ~= nil
  end
  -- has_question reports whether buf shows question q under its "## You"
  -- line, after the line naming the files that went with it if any.
  function h.has_question(buf, q)
    local t = h.text(buf)
    return t:find("## You\n\n" .. q, 1, true) ~= nil or t:find("## You\n\n_with [^\n]+_\n\n" .. vim.pesc(q)) ~= nil
  end

  -- said reports whether a notification so far holds s.
  function h.said(s)
    for _, m in ipairs(h.messages) do
      if m:find(s, 1, true) then
        return true
      end
    end
    return false
  end

  -- chat_bufs are the chat buffers.
  function h.chat_bufs()
    local out = {}
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find("ctxls://chat/", 1, true) then
        table.insert(out, b)
      end
    end
    return out
  end

  -- ask asks question with :CtxlsAsk and waits for the turn to end with
  -- want in a chat buffer; it returns that buffer.
  function h.ask(ctxls, question, want)
    vim.cmd("CtxlsAsk " .. question)
    local buf
    h.wait("the answer to " .. question, function()
      for _, b in ipairs(h.chat_bufs()) do
        if h.has(b, want) then
          buf = b
        end
      end
      return buf ~= nil and not ctxls.busy()
    end)
    return buf
  end

  -- expect fails with msg unless cond holds.
  function h.expect(cond, msg)
    if not cond then
      h.fail(msg)
    end
  end

  -- call_lines are the chat buffer's tool call lines, in order.
  function h.call_lines(buf)
    local out = {}
    for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if (l:find("^• ") or l:find("^▾ ")) and l:find(" — ", 1, true) then
        table.insert(out, l)
      end
    end
    return out
  end

  -- expand checks that the call on line lnum of the chat window win is
  -- folded, presses <CR> on it, and returns the lines it then shows under
  -- it (up to the fold's end, or a line matching one of stops) and how it
  -- read folded.
  function h.expand(win, lnum, stops)
    vim.api.nvim_set_current_win(win)
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.fn.foldclosed(lnum) ~= lnum then
      h.fail("the output of line " .. lnum .. " is not folded away:\n" .. h.chat_text())
    end
    local folded = vim.fn.foldtextresult(lnum)
    vim.api.nvim_win_set_cursor(win, { lnum, 0 })
    h.press("<CR>")
    if vim.fn.foldclosed(lnum) ~= -1 then
      h.fail("<CR> did not open the output of line " .. lnum)
    end
    local out = {}
    for i = lnum + 1, vim.api.nvim_buf_line_count(buf) do
      local l = vim.api.nvim_buf_get_lines(buf, i - 1, i, false)[1]
      if vim.fn.foldlevel(i) == 0 then
        break
      end
      for _, stop in ipairs(stops or {}) do
        if l:find(stop) then
          return out, folded
        end
      end
      table.insert(out, l)
    end
    return out, folded
  end

  -- chat_text is the chat buffer's text ("" before it exists).
  function h.chat_text()
    local chat = vim.fn.bufnr("ctxls://chat/")
    return chat >= 0 and h.text(chat) or ""
  end

  -- daemon_pid is the process id of the ctxls daemon this Neovim runs (its
  -- child running CTXLS_BIN), or nil. (Neovim 0.7's LSP client keeps it
  -- in client.rpc.pid; from 0.10 the client does not tell it.)
  function h.daemon_pid()
    local name = vim.fn.fnamemodify(os.getenv("CTXLS_BIN"), ":t"):sub(1, 15) -- (the kernel keeps 15)
    for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
      local p = vim.api.nvim_get_proc(pid)
      if p and p.name == name then
        return pid
      end
    end
  end

  -- prompting reports whether Neovim waits at a prompt (inputlist, Press
  -- ENTER, a confirm); luv callbacks may ask (fast API calls only). In
  -- 0.7 and 0.10 such a prompt is a blocking mode ("rm", "r"); 0.12 reads
  -- inputlist's answer on the command line: mode "c", not blocking.
  function h.prompting()
    local m = vim.api.nvim_get_mode()
    return m.blocking or m.mode:find("^[cr]") ~= nil
  end

  -- press types keys in the current window, mappings included.
  function h.press(keys)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "mx", false)
  end

  -- call runs the ctxls command named by its key in the protocol's
  -- commands and waits for its result.
  function h.call(name, arg)
    local result
    require("ctxls").command(require("ctxls.protocol").commands[name], arg, function(r)
      result = r
    end)
    h.wait("the result of " .. name, function()
      return result ~= nil
    end)
    return result
  end

  -- resume_first resumes the most recent session (:CtxlsSessions, its
  -- first item) and returns its chat buffer once it holds want.
  function h.resume_first(want)
    vim.ui.select = function(items, _, on_choice)
      on_choice(items[1])
    end
    vim.cmd("CtxlsSessions")
    local buf
    h.wait("the resumed chat", function()
      buf = h.chat_bufs()[1]
      return buf ~= nil and h.has(buf, want)
    end)
    return buf
  end

  return h
end
