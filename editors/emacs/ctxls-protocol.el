;;; ctxls-protocol.el --- The ctxls protocol's names  -*- lexical-binding: t; -*-

;; Generated from package api by `go test ./api -update`.
;; DO NOT EDIT.  SPDX-License-Identifier: MIT

;;; Commentary:

;; The commands (workspace/executeCommand), requests and notifications of
;; the ctxls daemon, as declared once in its Go table.  See docs/protocol.md.

;;; Code:

(defconst ctxls-protocol-version 1
  "The version every command result carries as v.")

(defconst ctxls-protocol-command-session-new "ctxls.session.new"
  "Creates a session and makes it the connection's current session.")

(defconst ctxls-protocol-command-session-resume "ctxls.session.resume"
  "Makes a stored session current, records this connection's envHint in
it (see Environment), and returns its relevant context, the files
items that no longer exist, and the reminder the model will be given
on the next turn.")

(defconst ctxls-protocol-command-session-list "ctxls.session.list"
  "Lists sessions, most recent activity first.")

(defconst ctxls-protocol-command-session-show "ctxls.session.show"
  "Returns a session and all its messages, oldest first.")

(defconst ctxls-protocol-command-session-rename "ctxls.session.rename"
  "Renames a session (titleSource becomes \"user\"; a model never overrides
it) and its folder.")

(defconst ctxls-protocol-command-session-delete "ctxls.session.delete"
  "Deletes a session: its messages, context and folder.")

(defconst ctxls-protocol-command-session-search "ctxls.session.search"
  "Full-text search over session titles and messages.")

(defconst ctxls-protocol-command-session-export "ctxls.session.export"
  "Writes the session as Markdown or JSON into its folder and returns the
path and the content.")

(defconst ctxls-protocol-command-session-share "ctxls.session.share"
  "Sets who sees a session in the PostgreSQL store (the daemon's
--store): \"private\", its owner only (a new session's default), or
\"team\", every role that is a member of ctxls_user.")

(defconst ctxls-protocol-command-context-set "ctxls.context.set"
  "Sets one named relevant-context set.")

(defconst ctxls-protocol-command-context-get "ctxls.context.get"
  "Returns the relevant-context sets, all of them or the one named.")

(defconst ctxls-protocol-command-context-candidates "ctxls.context.candidates"
  "Open and recently edited files the user may add to the context, most
recent activity first.")

(defconst ctxls-protocol-command-workspace-files "ctxls.workspace.files"
  "The workspace's files whose path (relative to its workspace folder)
holds query's characters in order, ignoring case: what an editor
offers after @ in a question (see @ mentions under ctxls.chat).")

(defconst ctxls-protocol-command-files-add "ctxls.files.add"
  "Copies a file into the session's sources/ folder: either path
\(absolute, or relative to the workspace root) or name with
contentBase64.")

(defconst ctxls-protocol-command-files-list "ctxls.files.list"
  "Lists the files in one of the session folder's subfolders (sources,
results, scripts, data; default sources), sorted, hidden files left
out.")

(defconst ctxls-protocol-command-files-remove "ctxls.files.remove"
  "Removes a file from the session's sources/ folder (a symbolic link is
removed, never its target).")

(defconst ctxls-protocol-command-document-get "ctxls.document.get"
  "Returns the text ctxls holds for an open document, unsaved edits
included: exactly what the model is given for it.")

(defconst ctxls-protocol-command-chat "ctxls.chat"
  "Runs a chat turn, exactly like the ctxls/chat request (see Chat turns
above): the answer streams as $/progress reports on the command's
workDoneToken (or one the server creates) and the result is the whole
answer.")

(defconst ctxls-protocol-command-chat-preview "ctxls.chat.preview"
  "Builds the exact model input a ctxls.chat turn with the same arguments
would send — the system prompt with the relevant files, the history
kept within the budget, this message, and the tools offered — and
returns it with token counts, without storing anything or calling the
provider (no provider or key is needed).")

(defconst ctxls-protocol-command-session-regenerate-title "ctxls.session.regenerateTitle"
  "Asks the model again for a 3–7 word title from the session's first
message (and its first complete answer, if any) and sets it
\(titleSource \"model\"), even over an earlier one; sends
ctxls/sessionUpdated.")

(defconst ctxls-protocol-command-session-clear-title "ctxls.session.clearTitle"
  "Makes the title automatic again: the first line of the session's first
message (\"New session\" if it has none), titleSource \"auto\", the folder
renamed with it.")

(defconst ctxls-protocol-command-session-set-model "ctxls.session.setModel"
  "Sets the model the session's turns use (meta.model), instead of the
provider's model; an empty model goes back to the provider's.")

(defconst ctxls-protocol-command-models-list "ctxls.models.list"
  "Lists the models the provider offers (its /v1/models), for choosing
the session's model (ctxls.session.setModel): current is the model the
session's next turn uses (the session's own, else the default),
default the model a new session gets (the one setModel made the
default, else the provider's).")

(defconst ctxls-protocol-command-session-set-review-mode "ctxls.session.setReviewMode"
  "Sets how the model's edits to your files are reviewed in the session
\(meta.reviewMode, kept with it): ask (the default: each edit is shown
as a diff and applied only once you accept it), auto (applied at once
through the editor, whose undo takes it back; the turn ends with the
list of files changed) or off (chat only: the model is offered only
tools that read, ctxls's own and the MCP tools their server marks
readOnlyHint; no edit tools).")

(defconst ctxls-protocol-command-session-compact "ctxls.session.compact"
  "Summarises the session's earlier turns now (see Compaction): the model
is asked for a summary of every whole turn since the last summary
except the newest (kept as it is when it fits in half the window),
folding the previous summary in; the summary is stored as a message of
its own (summaryOf: the first and last message ids it covers) and
later turns are given the system prompt, the summary and the turns
after it.")

(defconst ctxls-protocol-command-session-usage "ctxls.session.usage"
  "What a session's turns have cost: the tokens the provider reported for
every answer (each round of a turn with tool calls is an answer), in
all and by model, most tokens first.")

(defconst ctxls-protocol-command-session-undo "ctxls.session.undo"
  "Undoes the changes the model's edits made to the user's files in the
most recent turn of the session whose changes are not undone yet: an
open file through workspace/applyEdit on the buffer's current version
\(the editor's own undo takes the undo back), a file not open on disk,
a file the turn created removed (a DeleteFile through the editor).")

(defconst ctxls-protocol-command-session-redo "ctxls.session.redo"
  "Applies again the changes of the turn undone last
\(ctxls.session.undo), on the same rules: a file that is not as the
undo left it is left alone and named in left.")

(defconst ctxls-protocol-command-files-read "ctxls.files.read"
  "Returns the text of a file in one of the session folder's subfolders
\(sources by default), as ctxls.files.list names it: at most 1 MiB of
it (truncated says when there is more; size is the whole file's).")

(defconst ctxls-protocol-command-mcp-trust "ctxls.mcp.trust"
  "Trusts (or distrusts, with trust false) a workspace's .mcp.json as it
is now: its servers run commands, so ctxls uses them only once the
user trusted the file, and asks again when its content changes.")

(defconst ctxls-protocol-command-mcp-list "ctxls.mcp.list"
  "Lists the MCP servers configured for this connection: the user's file
\($XDG_CONFIG_HOME/ctxls/mcp.json, else ~/.config/ctxls/mcp.json), then
each workspace folder's .mcp.json once the user trusted it (see
ctxls.mcp.trust; workspaceFiles says where each stands), then
mcpServers of initializationOptions and settings (a server named again
replaces the earlier one; notes says so).")

(defconst ctxls-protocol-command-question-answer "ctxls.question.answer"
  "Answers a ctxls/question with one of its actions' id.")

(defconst ctxls-protocol-request-chat "ctxls/chat"
  "Runs a chat turn (see Chat turns above); the same as the command
ctxls.chat.")

(defconst ctxls-protocol-notification-context-changed "ctxls/contextChanged"
  "A session's relevant context was shown again on resume (reason
\"resume\") or changed by a command or the model (reason \"changed\").")

(defconst ctxls-protocol-notification-session-updated "ctxls/sessionUpdated"
  "A session's title changed (renamed, or named from its first message or
by the model), or the session was compacted: then compactedThrough is
the last message id the new summary covers (a turn compacted before
calling the model, or ctxls.session.compact; see Compaction).")

(defconst ctxls-protocol-notification-session-files-changed "ctxls/sessionFilesChanged"
  "A file in a session folder was written or removed: by the model's
write_file (by \"model\"; subdir results, scripts or data, name the path
below it such as \"charts/q1.csv\") or by ctxls.files.add /
ctxls.files.remove (by \"user\", subdir sources).")

(defconst ctxls-protocol-notification-tool-call "ctxls/toolCall"
  "A tool call of the model's during a turn began, changed or ended, for
the chat to show it as a card: ctxls's own tools (server empty) and
the user's MCP servers' (server the server's name, tool its tool's
name, name what the model called: mcp__SERVER__TOOL).")

(defconst ctxls-protocol-notification-question "ctxls/question"
  "Asks the user something, sent instead of window/showMessageRequest to
a client that set initializationOptions.questions: whether the model
may call a tool (kind \"permission\", toolCallId the call's
ctxls/toolCall id; actions allow, deny, always — this tool in this
session from now on) or whether to trust a workspace's .mcp.json (kind
\"trust\"; actions trust, distrust), or, to a client that did not set
reviewEdits, whether to apply one of the model's edits (kind \"review\",
toolCallId the call; actions accept, acceptAll — the rest of the
turn's edits too —, reject).")

(defconst ctxls-protocol-notification-question-closed "ctxls/questionClosed"
  "A ctxls/question ended: outcome is the action chosen (by this client
or another), \"timeout\" (no answer within toolPermissionTimeoutSeconds:
a permission is declined, a trust question asked again next time) or
\"cancelled\" (its turn ended first).")

(defconst ctxls-protocol-notification-plan "ctxls/plan"
  "The model replaced the session's plan with its update_plan tool
\(offered in every review mode; it changes nothing on disk and asks
nothing).")

(defconst ctxls-protocol-server-request-review-edit "ctxls/reviewEdit"
  "Asks the editor to show one of the model's edits for review (in the
ask review mode; see \"The model's edits\"), sent only to a client that
set initializationOptions.reviewEdits; others are asked with
window/showMessageRequest.")

(defconst ctxls-protocol-server-request-diagnostics "ctxls/diagnostics"
  "Asks the editor for its diagnostics (what its language servers and
linters report), sent only to a client that set
initializationOptions.diagnostics: the model's diagnostics tool reads
them (see \"The editor's diagnostics\").")

(defconst ctxls-protocol-client-notification-did-change-view "ctxls/didChangeView"
  "The editor's view changed: the focused document, its selection and the
visible lines.")

(defconst ctxls-protocol-plan-priority-high "high"
  "A value of planPriority.")

(defconst ctxls-protocol-plan-priority-medium "medium"
  "A value of planPriority.")

(defconst ctxls-protocol-plan-priority-low "low"
  "A value of planPriority.")

(defconst ctxls-protocol-plan-status-pending "pending"
  "A value of planStatus.")

(defconst ctxls-protocol-plan-status-in-progress "in_progress"
  "A value of planStatus.")

(defconst ctxls-protocol-plan-status-completed "completed"
  "A value of planStatus.")

(defconst ctxls-protocol-question-kind-permission "permission"
  "A value of questionKind.")

(defconst ctxls-protocol-question-kind-trust "trust"
  "A value of questionKind.")

(defconst ctxls-protocol-question-kind-review "review"
  "A value of questionKind.")

(defconst ctxls-protocol-review-decision-accept "accept"
  "A value of reviewDecision.")

(defconst ctxls-protocol-review-decision-accept-all "acceptAll"
  "A value of reviewDecision.")

(defconst ctxls-protocol-review-decision-reject "reject"
  "A value of reviewDecision.")

(defconst ctxls-protocol-review-mode-ask "ask"
  "A value of reviewMode.")

(defconst ctxls-protocol-review-mode-auto "auto"
  "A value of reviewMode.")

(defconst ctxls-protocol-review-mode-off "off"
  "A value of reviewMode.")

(defconst ctxls-protocol-role-system "system"
  "A value of role.")

(defconst ctxls-protocol-role-user "user"
  "A value of role.")

(defconst ctxls-protocol-role-assistant "assistant"
  "A value of role.")

(defconst ctxls-protocol-role-tool "tool"
  "A value of role.")

(defconst ctxls-protocol-status-complete "complete"
  "A value of status.")

(defconst ctxls-protocol-status-interrupted "interrupted"
  "A value of status.")

(defconst ctxls-protocol-status-cancelled "cancelled"
  "A value of status.")

(defconst ctxls-protocol-status-error "error"
  "A value of status.")

(defconst ctxls-protocol-status-streaming "streaming"
  "A value of status.")

(defconst ctxls-protocol-status-declined "declined"
  "A value of status.")

(defconst ctxls-protocol-title-source-auto "auto"
  "A value of titleSource.")

(defconst ctxls-protocol-title-source-model "model"
  "A value of titleSource.")

(defconst ctxls-protocol-title-source-user "user"
  "A value of titleSource.")

(defconst ctxls-protocol-tool-status-pending "pending"
  "A value of toolStatus.")

(defconst ctxls-protocol-tool-status-running "running"
  "A value of toolStatus.")

(defconst ctxls-protocol-tool-status-done "done"
  "A value of toolStatus.")

(defconst ctxls-protocol-tool-status-failed "failed"
  "A value of toolStatus.")

(defconst ctxls-protocol-tool-status-declined "declined"
  "A value of toolStatus.")

(defconst ctxls-protocol-tool-status-cancelled "cancelled"
  "A value of toolStatus.")

(defconst ctxls-protocol-visibility-private "private"
  "A value of visibility.")

(defconst ctxls-protocol-visibility-team "team"
  "A value of visibility.")

(defconst ctxls-protocol-commands
  '("ctxls.session.new"
    "ctxls.session.resume"
    "ctxls.session.list"
    "ctxls.session.show"
    "ctxls.session.rename"
    "ctxls.session.delete"
    "ctxls.session.search"
    "ctxls.session.export"
    "ctxls.session.share"
    "ctxls.context.set"
    "ctxls.context.get"
    "ctxls.context.candidates"
    "ctxls.workspace.files"
    "ctxls.files.add"
    "ctxls.files.list"
    "ctxls.files.remove"
    "ctxls.document.get"
    "ctxls.chat"
    "ctxls.chat.preview"
    "ctxls.session.regenerateTitle"
    "ctxls.session.clearTitle"
    "ctxls.session.setModel"
    "ctxls.models.list"
    "ctxls.session.setReviewMode"
    "ctxls.session.compact"
    "ctxls.session.usage"
    "ctxls.session.undo"
    "ctxls.session.redo"
    "ctxls.files.read"
    "ctxls.mcp.trust"
    "ctxls.mcp.list"
    "ctxls.question.answer")
  "Every command id, as the daemon advertises them.")

(defconst ctxls-protocol-init-option-data-dir "dataDir"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-session "session"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-provider "provider"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-storage-soft-limit-mb "storageSoftLimitMB"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-env-hint "envHint"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-view-idle-ms "viewIdleMs"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-compact-at "compactAt"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-mcp-servers "mcpServers"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-workspace-mcp-servers "workspaceMcpServers"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-allow-read-only-tools "allowReadOnlyTools"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-tool-permission-timeout-seconds "toolPermissionTimeoutSeconds"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-review-edits "reviewEdits"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-diagnostics "diagnostics"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-questions "questions"
  "An initializationOptions field.")

(defconst ctxls-protocol-init-option-project-instructions "projectInstructions"
  "An initializationOptions field.")

(defconst ctxls-protocol-setting-provider "provider"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-storage-soft-limit-mb "storageSoftLimitMB"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-view-idle-ms "viewIdleMs"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-compact-at "compactAt"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-mcp-servers "mcpServers"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-workspace-mcp-servers "workspaceMcpServers"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-allow-read-only-tools "allowReadOnlyTools"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-tool-permission-timeout-seconds "toolPermissionTimeoutSeconds"
  "A settings.ctxls field.")

(defconst ctxls-protocol-setting-project-instructions "projectInstructions"
  "A settings.ctxls field.")

(defconst ctxls-protocol-error-invalid-argument "invalidArgument"
  "An argument is missing, malformed or out of range (a bad session id
prefix, an unknown mode, a path outside the workspace).")

(defconst ctxls-protocol-error-not-found "notFound"
  "The session, message, file or open document named does not exist
\(deleted, or never made).")

(defconst ctxls-protocol-error-busy "busy"
  "A turn is already running in the session, here or on another machine:
wait for it or cancel it.")

(defconst ctxls-protocol-error-no-provider "noProvider"
  "No usable model provider is configured: set a model and a base URL or
key (see ctxls doctor).")

(defconst ctxls-protocol-error-provider-failed "providerFailed"
  "The model provider was asked and failed: refused the key, unknown
model, rate limit, server error, unreachable, or an empty answer.")

(defconst ctxls-protocol-error-too-large "tooLarge"
  "An argument or file is over its limit (the message says the limit and
the size).")

(defconst ctxls-protocol-error-store-unavailable "storeUnavailable"
  "The session store cannot be used now: not open yet, or its database
cannot be reached.")

(defconst ctxls-protocol-error-cancelled "cancelled"
  "The request was cancelled (a turn's partial answer is kept as
cancelled).")

(defconst ctxls-protocol-error-permission-denied "permissionDenied"
  "The store refused: only a session's owner may share or delete it
\(PostgreSQL).")

(defconst ctxls-protocol-error-internal "internal"
  "Anything else: a bug or an unexpected failure; the message says what
happened.")

(provide 'ctxls-protocol)
;;; ctxls-protocol.el ends here
