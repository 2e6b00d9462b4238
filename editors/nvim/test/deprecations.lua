-- Loaded before anything else (--cmd) in every Neovim the Go tests start
-- (run_test.go's nvimArgs): it writes each deprecation warning Neovim
-- gives to the file path, which the test reads when it ends.
--   vim.deprecate: each use of a feature Neovim warns of (0.12 shows only
--     a session's first such warning: each is written here all the same);
--   :messages: any line that says "deprecated", looked at on the way out
--     (VimLeavePre), whatever printed it.
-- A test's scripts replace vim.notify (where 0.10's warnings go): the
-- warning is caught here before that.
return function(path)
  local function report(what)
    local f = assert(io.open(path, "a"))
    f:write(what, "\n")
    f:close()
  end
  -- warns is whether Neovim warns of a feature of its own to be removed in
  -- version (its rule: from the minor version before that one on).
  local function warns(version)
    local major, minor = tostring(version):match("^(%d+)%.(%d+)")
    major, minor = tonumber(major), tonumber(minor)
    if not major or major > 0 then
      return false
    end
    return minor == 0 or vim.fn.has(("nvim-%d.%d"):format(major, minor - 1)) == 1
  end
  local deprecate = vim.deprecate -- (0.7 has none)
  if deprecate then
    vim.deprecate = function(name, alternative, version, plugin, backtrace)
      local msg = deprecate(name, alternative, version, plugin, backtrace)
      if msg or ((plugin == nil or plugin == "Nvim") and warns(version)) or os.getenv("CTXLS_TEST_SOFT_DEPRECATIONS") then
        report(("vim.deprecate: %s (use %s; removed in %s %s)\n%s"):format(name, tostring(alternative), plugin or "Nvim", tostring(version), debug.traceback("", 2)))
      end
      return msg
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
