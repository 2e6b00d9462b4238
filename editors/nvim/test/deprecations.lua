-- Loaded before anything else (--cmd) in every Neovim the Go tests start
-- (run_test.go's nvimArgs): it writes each use of a deprecated feature to
-- the file path, which the test reads when it ends (and fails on):
--   vim.deprecate: every call, whether this Neovim warns of it already or
--     only will (a feature is "soft" deprecated a version or two before
--     the warnings start); 0.12 shows a session's first warning only, and
--     0.10 shows them through vim.notify, which the test scripts replace;
--   :messages: any line that says "deprecated", looked at on the way out
--     (VimLeavePre), whatever printed it.
return function(path)
  local function report(what)
    local f = assert(io.open(path, "a"))
    f:write(what, "\n")
    f:close()
  end
  local deprecate = vim.deprecate -- (0.7 has none)
  if deprecate then
    vim.deprecate = function(name, alternative, version, plugin, backtrace)
      local warned = deprecate(name, alternative, version, plugin, backtrace)
      report(("vim.deprecate: %s is deprecated, use %s (%s %s%s)\n%s"):format(name, tostring(alternative), plugin or "Nvim",
        tostring(version), warned and "; warned" or "", debug.traceback("", 2)))
      return warned
    end
  end
  vim.api.nvim_create_autocmd("VimLeavePre", {
    callback = function()
      for line in vim.fn.execute("messages"):gmatch("[^\n]+") do
        if line:lower():find("deprecated", 1, true) then
          report(":messages: " .. line)
        end
      end
    end,
  })
end
