if vim.g.loaded_ctxls then
  return
end
vim.g.loaded_ctxls = true

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, fn, opts or {})
end

cmd("CtxlsAsk", function(a)
  require("ctxls").ask(a.args, { range = a.range > 0 and { a.line1, a.line2 } or nil, bang = a.bang })
end, { nargs = "*", range = true, bang = true })
cmd("CtxlsNew", function() require("ctxls").new_session() end)
cmd("CtxlsSessions", function() require("ctxls").sessions() end)
cmd("CtxlsRename", function(a) require("ctxls").rename(a.args) end, { nargs = "*" })
cmd("CtxlsDelete", function() require("ctxls").delete() end)
cmd("CtxlsAdd", function(a) require("ctxls").add(a.args) end, { nargs = "?", complete = "file" })
cmd("CtxlsDrop", function(a) require("ctxls").drop(a.args) end, { nargs = "?", complete = "file" })
cmd("CtxlsAttach", function(a) require("ctxls").attach_image(a.args, a.bang) end, { nargs = "?", bang = true, complete = "file" })
cmd("CtxlsContext", function() require("ctxls").show_context() end)
cmd("CtxlsCancel", function() require("ctxls").cancel() end)
cmd("CtxlsExport", function(a) require("ctxls").export(a.args, a.bang) end, { nargs = "?", bang = true, complete = "file" })
cmd("CtxlsShow", function(a) require("ctxls").show(a.args) end, { nargs = "?" })
cmd("CtxlsSearch", function(a) require("ctxls").search(a.args) end, { nargs = "*" })
cmd("CtxlsRegenerateTitle", function() require("ctxls").regenerate_title() end)
cmd("CtxlsCompact", function() require("ctxls").compact() end)
cmd("CtxlsPreview", function(a)
  require("ctxls").preview(a.args, { range = a.range > 0 and { a.line1, a.line2 } or nil, bang = a.bang })
end, { nargs = "*", range = true, bang = true })
local decision = function(name)
  return function() require("ctxls").decide(require("ctxls.protocol").review_decision[name]) end
end
cmd("CtxlsReview", function() require("ctxls").open_review() end)
cmd("CtxlsAccept", decision("accept"))
cmd("CtxlsAcceptAll", decision("accept_all"))
cmd("CtxlsReject", decision("reject"))
cmd("CtxlsAnswer", function(a) require("ctxls").answer(a.args) end, {
  nargs = 1,
  complete = function() return require("ctxls").answer_complete() end,
})
cmd("CtxlsReviewMode", function(a) require("ctxls").review_mode(a.args) end, {
  nargs = "?",
  complete = function() return { "ask", "auto", "off" } end,
})
cmd("CtxlsApplyBlock", function(a) require("ctxls").apply_block(a.bang) end, { bang = true })
cmd("CtxlsModel", function(a)
  -- ! goes back to the provider's default; no name: pick one.
  require("ctxls").set_model(a.bang and "" or (a.args ~= "" and a.args or nil))
end, { nargs = "?", bang = true })
cmd("CtxlsSetup", function() require("ctxls").setup_view() end)
cmd("CtxlsChat", function(a)
  require("ctxls").chat({ range = a.range > 0 and { a.line1, a.line2 } or nil, bang = a.bang })
end, { range = true, bang = true })
cmd("CtxlsRetry", function() require("ctxls").retry() end)
cmd("CtxlsEdit", function() require("ctxls").edit() end)
cmd("CtxlsUndo", function() require("ctxls").undo() end)
cmd("CtxlsRedo", function() require("ctxls").redo() end)
cmd("CtxlsSummary", function() require("ctxls").summary() end)
cmd("CtxlsQuickfix", function() require("ctxls").quickfix() end)
