-- What the chat's modules share of buffer handling.
local M = {}

-- set_lines replaces lines first..last (0-based, end-exclusive, as
-- nvim_buf_set_lines) of buf, a read-only buffer made modifiable for the
-- change.
function M.set_lines(buf, first, last, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, first, last, false, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
end

return M
