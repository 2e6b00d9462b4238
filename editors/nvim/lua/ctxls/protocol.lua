-- Generated from package api by `go test ./api -update`. DO NOT EDIT.
-- The ctxls protocol's names: commands (workspace/executeCommand), requests and
-- notifications. See docs/protocol.md.
return {
  v = 1,
  commands = {
    session_new = "ctxls.session.new",
    session_resume = "ctxls.session.resume",
    session_list = "ctxls.session.list",
    session_show = "ctxls.session.show",
    session_rename = "ctxls.session.rename",
    session_delete = "ctxls.session.delete",
    session_search = "ctxls.session.search",
    session_export = "ctxls.session.export",
    session_share = "ctxls.session.share",
    context_set = "ctxls.context.set",
    context_get = "ctxls.context.get",
    context_candidates = "ctxls.context.candidates",
    files_add = "ctxls.files.add",
    files_list = "ctxls.files.list",
    files_remove = "ctxls.files.remove",
    document_get = "ctxls.document.get",
    chat = "ctxls.chat",
    chat_preview = "ctxls.chat.preview",
    session_regenerate_title = "ctxls.session.regenerateTitle",
    session_clear_title = "ctxls.session.clearTitle",
    session_set_model = "ctxls.session.setModel",
    session_compact = "ctxls.session.compact",
    session_usage = "ctxls.session.usage",
  },
  requests = {
    chat = "ctxls/chat",
  },
  notifications = {
    context_changed = "ctxls/contextChanged",
    session_updated = "ctxls/sessionUpdated",
    session_files_changed = "ctxls/sessionFilesChanged",
  },
  client_notifications = {
    did_change_view = "ctxls/didChangeView",
  },
  -- The kind every error carries in its data ({kind}): decide on it, never on the message.
  error_kinds = {
    invalid_argument = "invalidArgument",
    not_found = "notFound",
    busy = "busy",
    no_provider = "noProvider",
    provider_failed = "providerFailed",
    too_large = "tooLarge",
    store_unavailable = "storeUnavailable",
    cancelled = "cancelled",
    permission_denied = "permissionDenied",
    internal = "internal",
  },
}
