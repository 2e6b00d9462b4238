// Package api declares ctxls's custom LSP API once: every
// workspace/executeCommand command and every custom notification, with its
// argument and result types, a one-line description and an example. The
// server registers handlers from this table, advertises its IDs in
// executeCommandProvider.commands, and docs/protocol.md is generated from it
// (a test fails when the document is stale).
//
// Command IDs and JSON field names are public API: editors depend on them.
// Add fields, never rename or remove them; bump V for incompatible changes.
package api

import (
	"encoding/json"
	"time"
)

// V is the version carried by every command result as "v".
const V = 1

// Command IDs.
const (
	SessionNew      = "ctxls.session.new"
	SessionResume   = "ctxls.session.resume"
	SessionList     = "ctxls.session.list"
	SessionShow     = "ctxls.session.show"
	SessionRename   = "ctxls.session.rename"
	SessionDelete   = "ctxls.session.delete"
	SessionSearch   = "ctxls.session.search"
	SessionExport   = "ctxls.session.export"
	SessionShare    = "ctxls.session.share"
	ContextSet      = "ctxls.context.set"
	ContextGet      = "ctxls.context.get"
	ContextCandids  = "ctxls.context.candidates"
	WorkspaceFiles  = "ctxls.workspace.files"
	FilesAdd        = "ctxls.files.add"
	FilesList       = "ctxls.files.list"
	FilesRemove     = "ctxls.files.remove"
	DocumentGet     = "ctxls.document.get"
	Chat            = "ctxls.chat"
	RegenerateTitle = "ctxls.session.regenerateTitle"
	ChatPreview     = "ctxls.chat.preview"
	ClearTitle      = "ctxls.session.clearTitle"
	SetModel        = "ctxls.session.setModel"
	SetReviewMode   = "ctxls.session.setReviewMode"
	ModelsList      = "ctxls.models.list"
	SessionCompact  = "ctxls.session.compact"
	SessionUsage    = "ctxls.session.usage"
	SessionUndo     = "ctxls.session.undo"
	SessionRedo     = "ctxls.session.redo"
	FilesRead       = "ctxls.files.read"
	MCPList         = "ctxls.mcp.list"
	MCPTrust        = "ctxls.mcp.trust"
	QuestionAnswer  = "ctxls.question.answer"
)

// Requests other than workspace/executeCommand.
const (
	ChatRequest = "ctxls/chat"
)

// Notification methods sent by the server.
const (
	ContextChanged = "ctxls/contextChanged"
	SessionUpdated = "ctxls/sessionUpdated"
	// SessionFilesChanged: a file in a session folder was written or removed.
	SessionFilesChanged = "ctxls/sessionFilesChanged"
	// ToolCall: a tool call of the model's began, changed or ended.
	ToolCall = "ctxls/toolCall"
	// Question: the daemon asks the user something (clients that set
	// initializationOptions.questions).
	Question = "ctxls/question"
	// QuestionClosed: a question ended (answered, timed out or cancelled).
	QuestionClosed = "ctxls/questionClosed"
	// Plan: the model replaced a session's plan (its update_plan tool).
	Plan = "ctxls/plan"
)

// Request methods the server sends (answered by clients that declare them).
const (
	// ReviewEdit asks the client to show one of the model's edits and say
	// whether the user accepts it.
	ReviewEdit = "ctxls/reviewEdit"
	// Diagnostics asks the client for the editor's diagnostics (errors
	// and warnings of its language servers), for the model's diagnostics
	// tool.
	Diagnostics = "ctxls/diagnostics"
)

// Notification methods sent by the client.
const (
	DidChangeView = "ctxls/didChangeView"
	// DidFocus is the older name of DidChangeView, still accepted.
	DidFocus = "textDocument/didFocus"
)

// Info describes one command or notification.
type Info struct {
	ID     string
	Doc    string // one line (or a short paragraph) for docs/protocol.md
	Args   any    // zero value of the argument type (nil for none)
	Result any    // zero value of the result type
	// Example argument and result, as JSON. Example arguments must decode
	// into Args; the test checks it.
	ExampleArgs   string
	ExampleResult string
}

// Commands lists every command, in the order docs/protocol.md shows them.
var Commands = []Info{
	{ID: SessionNew, Doc: "Creates a session and makes it the connection's current session. Without a title the session is called \"New session\" until its first message names it.",
		Args: SessionNewArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"title": "Fix login redirect"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Fix login redirect", "titleSource": "user", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:00:00Z", "meta": {}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--fix-login-redirect--k3j5q0", "messageCount": 0, "fileCount": 0}}`},
	{ID: SessionResume, Doc: "Makes a stored session current, records this connection's envHint in it (see Environment), and returns its relevant context, the `files` items that no longer exist, and the reminder the model will be given on the next turn. Also sends `ctxls/contextChanged` with reason \"resume\".",
		Args: SessionRefArgs{}, Result: ResumeResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Fix login redirect", "titleSource": "user", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:05:00Z", "meta": {"envHint": "vscode 1.90.0; workspace /home/ann/app; git branch main"}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--fix-login-redirect--k3j5q0", "messageCount": 4, "fileCount": 1}, "context": {"applet": ["editor", "file=/home/ann/app/login.go", "line=42"], "files": ["/home/ann/app/login.go", "/home/ann/app/old.go"], "ports": ["8080"]}, "missingFiles": ["/home/ann/app/old.go"], "reminder": "Environment: vscode 1.90.0; workspace /home/ann/app; git branch main\nRelevant files:\n- /home/ann/app/login.go\n(1 file not found)\nLast applet: editor (file=/home/ann/app/login.go, line=42)\nports: 8080\n"}`},
	{ID: SessionList, Doc: "Lists sessions, most recent activity first. A session is listed once it holds something: a message, a file, a context item other than the editor's view, or a title the user gave; empty ones (a new session nothing was asked in yet, the current one included) are left out, and the daemon removes those left an hour or more. `query` filters titles. `nextCursor` is present only when there are more sessions: pass it back as `cursor` for the next page; the last page has none. Each row has `messageCount` (every stored message, tool results and summaries included), `questions` (the user's questions) and `firstQuestion` (the first one's first line, at most 120 characters), which tells sessions of the same title apart.",
		Args: SessionListArgs{}, Result: SessionListResult{},
		ExampleArgs:   `{"query": "login", "limit": 20}`,
		ExampleResult: `{"v": 1, "sessions": [{"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Fix login redirect", "titleSource": "user", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:05:00Z", "messageCount": 4, "fileCount": 1, "questions": 2, "firstQuestion": "Why does login redirect twice?"}]}`},
	{ID: SessionShow, Doc: "Returns a session and all its messages, oldest first.",
		Args: SessionIDArgs{}, Result: ShowResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Fix login redirect", "titleSource": "user", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:05:00Z", "meta": {}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--fix-login-redirect--k3j5q0", "messageCount": 1, "fileCount": 0}, "messages": [{"id": 7, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "role": "user", "content": "Why does login redirect twice?", "status": "complete", "createdAt": "2026-11-22T14:01:00Z"}]}`},
	{ID: SessionRename, Doc: "Renames a session (titleSource becomes \"user\"; a model never overrides it) and its folder. Sends `ctxls/sessionUpdated`.",
		Args: SessionRenameArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Login redirect loop"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Login redirect loop", "titleSource": "user", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:06:00Z", "meta": {}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--login-redirect-loop--k3j5q0", "messageCount": 4, "fileCount": 1}}`},
	{ID: SessionDelete, Doc: "Deletes a session: its messages, context and folder. A turn running in it is stopped, and has ended (its answer not kept), before the session goes; the same over ACP (`session/delete`) and the CLI. If it was current, the connection has no current session afterwards.",
		Args: SessionRefArgs{}, Result: DeleteResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "deleted": true}`},
	{ID: SessionSearch, Doc: "Full-text search over session titles and messages. Plain words; the last word matches as a prefix. `messageId` is 0 for a title hit.",
		Args: SessionSearchArgs{}, Result: SearchResult{},
		ExampleArgs:   `{"query": "redirect", "limit": 10}`,
		ExampleResult: `{"v": 1, "hits": [{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Fix login redirect", "messageId": 7, "role": "user", "snippet": "Why does login «redirect» twice?"}]}`},
	{ID: SessionExport, Doc: "Writes the session as Markdown or JSON into its folder and returns the path and the content.",
		Args: SessionExportArgs{}, Result: ExportResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "format": "markdown"}`,
		ExampleResult: `{"v": 1, "path": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--fix-login-redirect--k3j5q0/export.md", "content": "# Fix login redirect\n..."}`},
	{ID: SessionShare, Doc: "Sets who sees a session in the PostgreSQL store (the daemon's `--store`): \"private\", its owner only (a new session's default), or \"team\", every role that is a member of ctxls_user. Only the session's owner may change it. The session's `owner` and `visibility` are set in this store only. The local SQLite store refuses (-32602): its sessions are on one machine.",
		Args: SessionShareArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "visibility": "team"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Fix login redirect", "titleSource": "user", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:05:00Z", "meta": {}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--fix-login-redirect--k3j5q0", "messageCount": 4, "fileCount": 1, "owner": "ann", "visibility": "team"}}`},
	{ID: ContextSet, Doc: "Sets one named relevant-context set. `mode` \"replace\" (default) or \"merge\" (union, order kept). Known sets: files, applet, endpoints, ports; other names work with a warning. At most 10 items per set and 50 in all. An empty replace deletes the set. `files` items are stored as absolute paths. Sends `ctxls/contextChanged` with reason \"changed\".",
		Args: ContextSetArgs{}, Result: ContextSetResult{},
		ExampleArgs:   `{"setName": "files", "items": ["src/login.go", "file:///home/ann/app/README.md"], "mode": "merge"}`,
		ExampleResult: `{"v": 1, "setName": "files", "items": ["/home/ann/app/src/login.go", "/home/ann/app/README.md"], "warnings": []}`},
	{ID: ContextGet, Doc: "Returns the relevant-context sets, all of them or the one named. With no session given and none current, returns an empty context.",
		Args: ContextGetArgs{}, Result: ContextGetResult{},
		ExampleArgs:   `{"setName": "files"}`,
		ExampleResult: `{"v": 1, "context": {"files": ["/home/ann/app/src/login.go"]}}`},
	{ID: ContextCandids, Doc: "Open and recently edited files the user may add to the context, most recent activity first. `dirty` means unsaved changes; `active` is the focused file.",
		Args: EmptyArgs{}, Result: CandidatesResult{},
		ExampleArgs:   `{}`,
		ExampleResult: `{"v": 1, "files": [{"uri": "file:///home/ann/app/src/login.go", "path": "/home/ann/app/src/login.go", "languageId": "go", "open": true, "dirty": true, "active": true, "lastEditedAt": "2026-11-22T14:04:59Z", "size": 5120}]}`},
	{ID: WorkspaceFiles, Doc: "The workspace's files whose path (relative to its workspace folder) holds `query`'s characters in order, ignoring case: what an editor offers after `@` in a question (see `@` mentions under `ctxls.chat`). Best first: a name starting with the query, a name holding it, a path holding it, its characters apart in the name, then in the path; shorter paths first. An empty query lists the open and recently edited files first, then the others most recently modified first. Files .gitignore or .ignore exclude, `.git`, files whose name looks secret (`.env`, keys) and files outside the workspace folders are left out: what is listed is what a mention sends. `limit` defaults to 50; `truncated` says more files matched.",
		Args: WorkspaceFilesArgs{}, Result: WorkspaceFilesResult{},
		ExampleArgs:   `{"query": "login", "limit": 20}`,
		ExampleResult: `{"v": 1, "files": [{"path": "src/login.go"}, {"path": "src/login_test.go"}], "truncated": false}`},
	{ID: FilesAdd, Doc: "Copies a file into the session's sources/ folder: either `path` (absolute, or relative to the workspace root) or `name` with `contentBase64`. At most 25 MiB (26,214,400 bytes); a larger file is refused with its exact size. An existing file of the same name is replaced. Sends `ctxls/sessionFilesChanged` (by \"user\").",
		Args: FilesAddArgs{}, Result: FilesAddResult{},
		ExampleArgs:   `{"path": "docs/spec.pdf"}`,
		ExampleResult: `{"v": 1, "name": "spec.pdf", "size": 48213}`},
	{ID: FilesList, Doc: "Lists the files in one of the session folder's subfolders (sources, results, scripts, data; default sources), sorted, hidden files left out. Only files are listed, never folders: in sources/ the files directly inside; in results/, scripts/ and data/ also the files in folders below, as \"sub/name\". Symbolic links to folders are neither listed nor followed.",
		Args: FilesListArgs{}, Result: FilesListResult{},
		ExampleArgs:   `{"subdir": "sources"}`,
		ExampleResult: `{"v": 1, "files": ["data.csv", "spec.pdf"]}`},
	{ID: FilesRemove, Doc: "Removes a file from the session's sources/ folder (a symbolic link is removed, never its target). Sends `ctxls/sessionFilesChanged` (by \"user\", size 0, removed true).",
		Args: FilesRemoveArgs{}, Result: FilesRemoveResult{},
		ExampleArgs:   `{"name": "spec.pdf"}`,
		ExampleResult: `{"v": 1, "name": "spec.pdf", "removed": true}`},
	{ID: DocumentGet, Doc: "Returns the text ctxls holds for an open document, unsaved edits included: exactly what the model is given for it. For checking that an editor's incremental sync is right.",
		Args: DocumentGetArgs{}, Result: DocumentGetResult{},
		ExampleArgs:   `{"uri": "file:///home/ann/app/src/login.go"}`,
		ExampleResult: `{"v": 1, "uri": "file:///home/ann/app/src/login.go", "version": 42, "text": "package app\n..."}`},
	{ID: Chat, Doc: "Runs a chat turn, exactly like the `ctxls/chat` request (see Chat turns above): the answer streams as `$/progress` reports on the command's workDoneToken (or one the server creates) and the result is the whole answer. `files` are added for this turn only, and so is each file the message mentions: `@PATH` at its start or after a space (PATH relative to a workspace folder, or absolute inside one; `@PATH:N` or `@PATH:N-M` names lines), when PATH is a file inside a workspace folder (links resolved), not in `.git` and without a secret-looking name (an ignored file may be mentioned by its whole path, though `ctxls.workspace.files` does not offer it); at most 20 a message; the message is stored and sent as typed.",
		Args: ChatArgs{}, Result: ChatResult{},
		ExampleArgs:   `{"message": "Why does login redirect twice?", "files": ["src/login.go"]}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "messageId": 9, "text": "Because the middleware...", "finishReason": "stop", "usage": {"promptTokens": 1834, "completionTokens": 211}}`},
	{ID: ChatPreview, Doc: "Builds the exact model input a `ctxls.chat` turn with the same arguments would send — the system prompt with the relevant files, the history kept within the budget, this message, and the tools offered — and returns it with token counts, without storing anything or calling the provider (no provider or key is needed). Without `sessionId` and with no current session it previews a new session's first turn and creates none. `tokens.files` is the part of `tokens.system` the relevant files' contents take; `tokens.history` counts the earlier messages kept (and the session's summary of earlier turns, if it has one; see Compaction) plus this message; `budget` is the context window less the output reserve; `dropped` counts earlier messages that do not fit (the input marks the cut). `files` names the files that go with the question (those given and those its message mentions, with the lines they name), as the question would be stored with them.",
		Args: ChatArgs{}, Result: ChatPreviewResult{},
		ExampleArgs:   `{"message": "Why does login redirect twice?", "files": ["src/login.go"]}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "model": "gpt-4o-mini", "messages": [{"role": "system", "content": "You are ctxls, a coding assistant...\n\n## Relevant Files\n\n/home/ann/app/src/login.go\n` + "```" + `\npackage app\n` + "```" + `\n"}, {"role": "user", "content": "Why does login redirect twice?"}], "tools": [{"name": "read_file", "description": "Read a file...", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}], "tokens": {"system": 412, "history": 9, "files": 130, "total": 421}, "budget": 123904, "dropped": 0, "files": ["/home/ann/app/src/login.go"]}`},
	{ID: RegenerateTitle, Doc: "Asks the model again for a 3–7 word title from the session's first message (and its first complete answer, if any) and sets it (titleSource \"model\"), even over an earlier one; sends `ctxls/sessionUpdated`. A failed call keeps the old title and answers with the error.",
		Args: SessionIDArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Login redirect loop", "titleSource": "model", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:06:00Z", "meta": {}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--login-redirect-loop--k3j5q0", "messageCount": 4, "fileCount": 1}}`},
	{ID: ClearTitle, Doc: "Makes the title automatic again: the first line of the session's first message (\"New session\" if it has none), titleSource \"auto\", the folder renamed with it. The model is asked for a title again after the next complete answer, which replaces this one. Sends `ctxls/sessionUpdated`.",
		Args: SessionIDArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Why does login redirect twice?", "titleSource": "auto", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:07:00Z", "meta": {}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--why-does-login-redirect-twice--k3j5q0", "messageCount": 4, "fileCount": 1}}`},
	{ID: SetModel, Doc: "Sets the model the session's turns use (`meta.model`), instead of the provider's `model`; an empty `model` goes back to the provider's. Each stored answer records the model that wrote it (`model` on the message). The title model stays the provider's `titleModel`. Creates a session on first need, like the other commands that write. With `default: true` the model also becomes the default model: every session made from then on starts with it as its own `meta.model` (in every daemon on this data directory, after restarts too), in place of the provider's `model` and `CTXLS_MODEL`; sessions made before keep theirs. It is kept in the data directory (`preferences.json`, the model's name only); `model: \"\"` with `default: true` forgets it. Without `default` only the session changes.",
		Args: SetModelArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "model": "gpt-4o", "default": true}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Login redirect loop", "titleSource": "model", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:08:00Z", "meta": {"model": "gpt-4o"}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--login-redirect-loop--k3j5q0", "messageCount": 4, "fileCount": 1}}`},
	{ID: ModelsList, Doc: "Lists the models the provider offers (its `/v1/models`), for choosing the session's model (`ctxls.session.setModel`): `current` is the model the session's next turn uses (the session's own, else the default), `default` the model a new session gets (the one `setModel` made the default, else the provider's). A server given with no model (a base URL, no `model`, `CTXLS_MODEL` empty) still lists its models, with `current` and `default` empty, for one to be picked. A provider that cannot be reached answers with its error (kind providerFailed); none configured, kind noProvider.",
		Args: SessionIDArgs{}, Result: ModelsListResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "models": ["gpt-4o", "gpt-4o-mini", "o4-mini"], "current": "gpt-4o", "default": "gpt-4o-mini"}`},
	{ID: SetReviewMode, Doc: "Sets how the model's edits to your files are reviewed in the session (`meta.reviewMode`, kept with it): `ask` (the default: each edit is shown as a diff and applied only once you accept it), `auto` (applied at once through the editor, whose undo takes it back; the turn ends with the list of files changed) or `off` (chat only: the model is offered only tools that read, ctxls's own and the MCP tools their server marks `readOnlyHint`; no edit tools). See \"The model's edits\". Creates a session on first need.",
		Args: SetReviewModeArgs{}, Result: SessionResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "mode": "auto"}`,
		ExampleResult: `{"v": 1, "session": {"id": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Login redirect loop", "titleSource": "model", "createdAt": "2026-11-22T14:00:00Z", "updatedAt": "2026-11-22T14:08:00Z", "meta": {"reviewMode": "auto"}, "folder": "/home/ann/.local/share/ctxls/sessions/2026-11-22T14-00-00--login-redirect-loop--k3j5q0", "messageCount": 4, "fileCount": 1}}`},
	{ID: SessionCompact, Doc: "Summarises the session's earlier turns now (see Compaction): the model is asked for a summary of every whole turn since the last summary except the newest (kept as it is when it fits in half the window), folding the previous summary in; the summary is stored as a message of its own (`summaryOf`: the first and last message ids it covers) and later turns are given the system prompt, the summary and the turns after it. Nothing is deleted. Needs a provider; a turn running in the session is refused (-32803), and so is a session with nothing to compact (-32602). A failed summary request stores nothing and answers with the error. `covered` counts the messages the summary covers; `tokens` is what the summary and the turns kept take now (the system prompt not counted). Sends `ctxls/sessionUpdated` with `compactedThrough`.",
		Args: SessionIDArgs{}, Result: SessionCompactResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "summary": {"id": 2104, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "role": "system", "content": "## Goal\nA resumable importer...", "status": "complete", "createdAt": "2026-12-10T09:30:00Z", "summaryOf": {"first": 7, "last": 2101, "covered": 2095, "questions": 698}}, "compactedThrough": 2101, "covered": 2095, "tokens": 1650}`},
	{ID: SessionUsage, Doc: "What a session's turns have cost: the tokens the provider reported for every answer (each round of a turn with tool calls is an answer), in all and by model, most tokens first. `promptTokens` counts what was sent again each turn (system prompt, relevant files, history). Answers without usage (cancelled before the provider reported it) are counted in `unreported`.",
		Args: SessionIDArgs{}, Result: SessionUsageResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "answers": 12, "unreported": 1, "promptTokens": 48210, "completionTokens": 2304, "models": [{"model": "gpt-4o-mini", "answers": 10, "promptTokens": 40120, "completionTokens": 1980}, {"model": "gpt-4o", "answers": 2, "promptTokens": 8090, "completionTokens": 324}]}`},
	{ID: SessionUndo, Doc: "Undoes the changes the model's edits made to the user's files in the most recent turn of the session whose changes are not undone yet: an open file through `workspace/applyEdit` on the buffer's current version (the editor's own undo takes the undo back), a file not open on disk, a file the turn created removed (a DeleteFile through the editor). A file that is not as the turn left it (typed in since, or changed by a later turn) is left alone and named in `left` with why; the turn's other files are still undone. The model is told on its next turn. Refused while a turn runs in the session. With `from` (a question's message id), every turn from that question on is undone, newest first: what a client offers before it asks a question again (`ctxls/chat`'s `rewind`), which removes those turns; `turn` is then the oldest turn undone.",
		Args: UndoArgs{}, Result: UndoResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "turn": 2101, "restored": ["/home/ann/app/login.go", "/home/ann/app/login_test.go"], "left": [{"path": "/home/ann/app/routes.go", "reason": "it changed since the turn, after the model's change"}]}`},
	{ID: SessionRedo, Doc: "Applies again the changes of the turn undone last (`ctxls.session.undo`), on the same rules: a file that is not as the undo left it is left alone and named in `left`.",
		Args: SessionIDArgs{}, Result: UndoResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6"}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "turn": 2101, "restored": ["/home/ann/app/login.go", "/home/ann/app/login_test.go"], "left": []}`},
	{ID: FilesRead, Doc: "Returns the text of a file in one of the session folder's subfolders (sources by default), as `ctxls.files.list` names it: at most 1 MiB of it (`truncated` says when there is more; `size` is the whole file's). A file that is not UTF-8 text is reported with `binary` and no content. Only files the list shows are read: never a hidden file, a folder or a symbolic link.",
		Args: FilesReadArgs{}, Result: FilesReadResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "subdir": "results", "name": "charts/q1.csv"}`,
		ExampleResult: `{"v": 1, "subdir": "results", "name": "charts/q1.csv", "size": 2048, "content": "quarter,revenue\n..."}`},
	{ID: MCPTrust, Doc: "Trusts (or distrusts, with `trust` false) a workspace's `.mcp.json` as it is now: its servers run commands, so ctxls uses them only once the user trusted the file, and asks again when its content changes. The daemon asks itself when a turn first meets an undecided file (`ctxls/question` kind \"trust\", or `window/showMessageRequest` \"Trust\" / \"Don't trust\", a terminal prompt in the CLI); this records the decision without a turn. `path` is the file (or its folder); the decision is kept for this machine in the data directory (`mcp-trust.json`) with the file's SHA-256.",
		Args: MCPTrustArgs{}, Result: MCPTrustResult{},
		ExampleArgs:   `{"path": "/home/ann/app/.mcp.json", "trust": true}`,
		ExampleResult: `{"v": 1, "path": "/home/ann/app/.mcp.json", "state": "trusted", "servers": ["github", "postgres"]}`},
	{ID: MCPList, Doc: "Lists the MCP servers configured for this connection: the user's file ($XDG_CONFIG_HOME/ctxls/mcp.json, else ~/.config/ctxls/mcp.json), then each workspace folder's `.mcp.json` once the user trusted it (see `ctxls.mcp.trust`; `workspaceFiles` says where each stands), then `mcpServers` of initializationOptions and settings (a server named again replaces the earlier one; `notes` says so). Each with where it came from, how it is reached and whether this daemon has it `running`; the names of its env variables and headers, never their values. With `tools` each server is started (or reached) and asked for its tools; a server that cannot be says why in `error`; entries of a server's list that are no tools the protocol allows (a `name` that is not a string, `null`, …) are left out, the others kept, and counted in `toolsLeftOut`, the first 20 with why in `leftOutReasons`. A server the configuration cannot use is in `errors`, naming the file, the server and the field.",
		Args: MCPListArgs{}, Result: MCPListResult{},
		ExampleArgs:   `{"tools": true}`,
		ExampleResult: `{"v": 1, "servers": [{"name": "fs", "source": "/home/ann/.config/ctxls/mcp.json", "type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ann/app"], "envKeys": [], "headerKeys": [], "timeoutSeconds": 60, "tools": [{"name": "read_text_file", "description": "Read a file", "readOnly": true}]}], "errors": ["settings: server \"docs\", field url: must be an http:// or https:// URL, got \"ftp://docs\""], "notes": []}`},
	{ID: QuestionAnswer, Doc: "Answers a `ctxls/question` with one of its actions' `id`. The daemon then sends `ctxls/questionClosed` with that action as the outcome. A question that is no longer open (answered already, timed out, its turn cancelled) or was never asked is refused (-32602, kind notFound); an action the question does not offer, too (kind invalidArgument), and the question stays open.",
		Args: QuestionAnswerArgs{}, Result: QuestionAnswerResult{},
		ExampleArgs:   `{"id": "q3", "action": "allow"}`,
		ExampleResult: `{"v": 1, "id": "q3", "action": "allow"}`},
}

// Requests lists the requests other than workspace/executeCommand.
var Requests = []Info{
	{ID: ChatRequest, Doc: "Runs a chat turn (see Chat turns above); the same as the command `ctxls.chat`.",
		Args: ChatArgs{}, Result: ChatResult{},
		ExampleArgs:   `{"message": "Why does login redirect twice?", "files": ["src/login.go"], "workDoneToken": "chat-1"}`,
		ExampleResult: `{"v": 1, "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "messageId": 9, "text": "Because the middleware...", "finishReason": "stop", "usage": {"promptTokens": 1834, "completionTokens": 211}}`},
}

// Notifications lists every notification the server sends.
var Notifications = []Info{
	{ID: ContextChanged, Doc: "A session's relevant context was shown again on resume (reason \"resume\") or changed by a command or the model (reason \"changed\"). `added`/`removed` are the items of the changed set; `missing` lists `files` items that do not exist on disk. `applet` is the `applet` set as an object (slug and parameters), present when the session has one; the editor's idle view capture changes it (reason \"changed\"). A change another daemon made (PostgreSQL store, see Live updates) has reason \"changed\", the whole context and empty `added`/`removed`.",
		Result:        ContextChangedParams{},
		ExampleResult: `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "reason": "changed", "context": {"applet": ["editor", "file=/home/ann/app/src/login.go", "line=42", "selection=42-49"], "files": ["/home/ann/app/src/login.go"]}, "added": ["editor", "file=/home/ann/app/src/login.go", "line=42", "selection=42-49"], "removed": [], "missing": [], "applet": {"slug": "editor", "params": {"file": "/home/ann/app/src/login.go", "line": "42", "selection": "42-49"}}}`},
	{ID: SessionUpdated, Doc: "A session's title changed (renamed, or named from its first message or by the model), or the session was compacted: then `compactedThrough` is the last message id the new summary covers (a turn compacted before calling the model, or `ctxls.session.compact`; see Compaction). With the PostgreSQL store also when another daemon changed the session (its title, its messages or its activity; see Live updates), and for the current session when the daemon reconnected to the database: read the session again.",
		Result:        SessionUpdatedParams{},
		ExampleResult: `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "title": "Login redirect loop", "titleSource": "user"}`},
	{ID: SessionFilesChanged, Doc: "A file in a session folder was written or removed: by the model's `write_file` (`by` \"model\"; `subdir` results, scripts or data, `name` the path below it such as \"charts/q1.csv\") or by `ctxls.files.add` / `ctxls.files.remove` (`by` \"user\", `subdir` sources). `size` is the file's size in bytes; for a removal it is 0 and `removed` is true. A file another daemon wrote or removed (PostgreSQL store, see Live updates) has `by` \"remote\", once this machine's mirror of the session folder has followed it. Files the storage clean-up removes are reported with `window/showMessage` instead.",
		Result:        SessionFilesChangedParams{},
		ExampleResult: `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "subdir": "results", "name": "charts/q1.csv", "size": 2048, "by": "model"}`},
	{ID: ToolCall, Doc: "A tool call of the model's during a turn began, changed or ended, for the chat to show it as a card: ctxls's own tools (`server` empty) and the user's MCP servers' (`server` the server's name, `tool` its tool's name, `name` what the model called: `mcp__SERVER__TOOL`). `status` goes `pending` (waiting for the user's permission: the daemon asks with `ctxls/question`, or `window/showMessageRequest` a client that did not set `initializationOptions.questions`) → `running` → `done`, `failed`, `declined` (the user said no) or `cancelled` (the turn was cancelled while the call waited for the user or ran; its stored result's status is `cancelled` too); ctxls's own tools start `running`, but for those that ask first (`run_command`; the edit tools, reviewed) `pending`. `arguments` is the call's JSON, at most 2,000 characters; `progress` is the server's latest progress message while it runs (`run_command`'s: the last 4 KiB of its output so far); `output`, on the end, is what the model got back, at most 8,000 characters; `summary`, on the end of some of ctxls's own tools, says the outcome in a few words for the card (grep: \"12 matches in 4 files\"; an edit: \"+3 −1 lines\"). Sent for every call, with the same `id` each time: ctxls's own id for the call, unique in the session (`ANSWER:INDEX`, the answer message's id and the call's place in it; opaque to clients), never the provider's, which may repeat (`call_1` in every turn); the stored calls and results (`ctxls.session.show`) and ACP's `toolCallId` carry the same id. `$/progress` reports carry a one-line `message` for clients that show only those.",
		Result:        ToolCallParams{},
		ExampleResult: `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "id": "call_1", "name": "mcp__github__list_issues", "server": "github", "tool": "list_issues", "arguments": "{\"repo\": \"ann/app\"}", "status": "done", "output": "[{\"number\": 12, \"title\": \"Login loops\"}]"}`},
	{ID: Question, Doc: "Asks the user something, sent instead of `window/showMessageRequest` to a client that set `initializationOptions.questions`: whether the model may call a tool (`kind` \"permission\", `toolCallId` the call's `ctxls/toolCall` id; actions `allow`, `deny`, `always` — this tool in this session from now on) or whether to trust a workspace's `.mcp.json` (`kind` \"trust\"; actions `trust`, `distrust`), or, to a client that did not set `reviewEdits`, whether to apply one of the model's edits (`kind` \"review\", `toolCallId` the call; actions `accept`, `acceptAll` — the rest of the turn's edits too —, `reject`). Show it in the chat without taking focus and keep it until `ctxls/questionClosed` comes; answer with `ctxls.question.answer`. An action marked `deliberate` must take a deliberate act (a confirmation, a command of its own), never one keystroke that may have been meant for something else. `id` is unique for the daemon's life. The turn waits for the answer up to `toolPermissionTimeoutSeconds`.",
		Result:        QuestionParams{},
		ExampleResult: `{"id": "q3", "sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "kind": "permission", "message": "ctxls: the model wants to call github · list_issues (read-only) with {\"repo\":\"ann/app\"}. Allow it?", "toolCallId": "call_1", "actions": [{"id": "allow", "title": "Allow once", "deliberate": false}, {"id": "deny", "title": "Deny", "deliberate": false}, {"id": "always", "title": "Always in this session", "deliberate": true}]}`},
	{ID: QuestionClosed, Doc: "A `ctxls/question` ended: `outcome` is the action chosen (by this client or another), \"timeout\" (no answer within `toolPermissionTimeoutSeconds`: a permission is declined, a trust question asked again next time) or \"cancelled\" (its turn ended first). Remove the question's keys or buttons and show the outcome. Sent exactly once per question.",
		Result:        QuestionClosedParams{},
		ExampleResult: `{"id": "q3", "outcome": "allow"}`},
	{ID: Plan, Doc: "The model replaced the session's plan with its `update_plan` tool (offered in every review mode; it changes nothing on disk and asks nothing). `entries` is the whole plan, in the model's order (at most 100): `content` what to do, `status` `pending`, `in_progress` or `completed`, `priority` `high`, `medium` (when the model gave none) or `low`; an empty list clears the plan. Show it in the chat and replace the one shown before. The plan is kept with the session: `ctxls.session.show` and the other commands that return a session carry it as `session.meta.plan`, and each later turn gives it to the model.",
		Result:        PlanParams{},
		ExampleResult: `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "entries": [{"content": "Find where the redirect is issued", "priority": "high", "status": "completed"}, {"content": "Fix the double redirect", "priority": "high", "status": "in_progress"}, {"content": "Add a test", "priority": "medium", "status": "pending"}]}`},
}

// ServerRequests lists the requests the server makes of a client that
// declared it answers them (initializationOptions). Args is the params
// type, Result the answer's.
var ServerRequests = []Info{
	{ID: ReviewEdit, Doc: "Asks the editor to show one of the model's edits for review (in the `ask` review mode; see \"The model's edits\"), sent only to a client that set `initializationOptions.reviewEdits`; others are asked with `window/showMessageRequest`. `oldText` is the file's text the edit was computed against (the editor's, unsaved edits included; empty for a new file), `newText` the text after it, `diff` the same as a unified diff, `summary` one line. Answer `decision` `accept`, `acceptAll` (this and the rest of the turn's edits) or `reject`; with an accept, `text` may give the file's whole text as the user chose it instead of `newText` (a part of the edit: some of its changes taken, the others left out, made against `oldText`): the daemon applies that and tells the model which part was applied (the same text as `oldText`: nothing is applied, the edit counts as rejected); `null` or an error rejects it; no answer within `toolPermissionTimeoutSeconds` leaves the file unchanged too, the model told the review was not answered (not that the edit was rejected). On accept the daemon sends `workspace/applyEdit` (the client must not apply it itself).",
		Args: ReviewEditParams{}, Result: ReviewEditResult{},
		ExampleArgs:   `{"sessionId": "k3j5q0v9c1m2n4p6r8s0t2u4w6", "id": "call_3", "path": "/home/ann/app/main.go", "uri": "file:///home/ann/app/main.go", "oldText": "package main\n\nfunc main() {}\n", "newText": "package main\n\nfunc main() { run() }\n", "diff": "--- a//home/ann/app/main.go\n+++ b//home/ann/app/main.go\n@@ -1,3 +1,3 @@\n package main\n \n-func main() {}\n+func main() { run() }\n", "summary": "+1 −1 lines"}`,
		ExampleResult: `{"decision": "accept"}`},
	{ID: Diagnostics, Doc: "Asks the editor for its diagnostics (what its language servers and linters report), sent only to a client that set `initializationOptions.diagnostics`: the model's `diagnostics` tool reads them (see \"The editor's diagnostics\"). Answer with one entry per file: `uri` and its `diagnostics` as LSP's `Diagnostic` (`range` in the negotiated position encoding, `severity` 1 error, 2 warning, 3 information, 4 hint, `code`, `source`, `message`). Without `uris`, every file the editor has diagnostics for; with them, those files (an empty list for a file without any). With `waitMs`, answer once the diagnostics of those files (of any file, without `uris`) have changed after the request arrived, or when `waitMs` milliseconds have passed, whichever comes first: after an edit, the answer then holds what the editor's language servers said of the new text. The daemon waits `waitMs` plus 5 seconds for the answer, then gives up (the tool says so).",
		Args: DiagnosticsParams{}, Result: []FileDiagnostics{},
		ExampleArgs:   `{"uris": ["file:///home/ann/app/main.go"], "waitMs": 2000}`,
		ExampleResult: `[{"uri": "file:///home/ann/app/main.go", "diagnostics": [{"range": {"start": {"line": 2, "character": 13}, "end": {"line": 2, "character": 16}}, "severity": 1, "code": "UndeclaredName", "source": "compiler", "message": "undefined: run"}]}]`},
}

// ClientNotifications lists the notifications ctxls accepts from the
// editor beyond the standard LSP ones. Args is the params type and
// ExampleArgs its example; they have no result.
var ClientNotifications = []Info{
	{ID: DidChangeView, Doc: "The editor's view changed: the focused document, its selection and the visible lines. Send it when the active editor, its selection or its scroll position changes (debouncing is not needed). Records the active file (`active` in `ctxls.context.candidates`); once no view change has arrived for `viewIdleMs`, the view is captured as the current session's `applet` set (see \"The editor's view\" above). Positions are in the negotiated encoding; only their lines are used. `textDocument/didFocus` with the same params is accepted as an older name.",
		Args:        DidChangeViewParams{},
		ExampleArgs: `{"textDocument": {"uri": "file:///home/ann/app/src/login.go"}, "selection": {"start": {"line": 41, "character": 4}, "end": {"line": 49, "character": 0}}, "visibleRange": {"start": {"line": 20, "character": 0}, "end": {"line": 80, "character": 0}}}`},
}

// IDs returns every command ID, for executeCommandProvider.commands.
func IDs() []string {
	ids := make([]string, len(Commands))
	for i, c := range Commands {
		ids[i] = c.ID
	}
	return ids
}

// EmptyArgs is the argument of commands that take none: {}.
type EmptyArgs struct{}

// SessionNewArgs is the argument of ctxls.session.new.
type SessionNewArgs struct {
	Title string `json:"title,omitempty" max:"200"`
}

// SessionIDArgs names one session; an empty id means the current session.
type SessionIDArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
}

// SessionRefArgs names one session; the id is required.
type SessionRefArgs struct {
	SessionID string `json:"sessionId" max:"64"`
}

// SetModelArgs is the argument of ctxls.session.setModel.
type SetModelArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Model     string `json:"model" max:"200"` // "" for the provider's model
	// Default makes Model the model every new session starts with, kept
	// in the data directory ("" forgets it).
	Default bool `json:"default,omitempty"`
}

// ModelsListResult is the result of ctxls.models.list.
type ModelsListResult struct {
	V       int      `json:"v"`
	Models  []string `json:"models"`
	Current string   `json:"current"`
	Default string   `json:"default"`
}

// SetReviewModeArgs is the argument of ctxls.session.setReviewMode.
type SetReviewModeArgs struct {
	SessionID string     `json:"sessionId,omitempty" max:"64"`
	Mode      ReviewMode `json:"mode" max:"8"`
}

// SessionResult carries one session.
type SessionResult struct {
	V       int      `json:"v"`
	Session *Session `json:"session"`
}

// ResumeResult is the result of ctxls.session.resume.
type ResumeResult struct {
	V            int      `json:"v"`
	Session      *Session `json:"session"`
	Context      Context  `json:"context"`
	MissingFiles []string `json:"missingFiles"`
	Reminder     string   `json:"reminder"`
}

// SessionListArgs is the argument of ctxls.session.list.
type SessionListArgs struct {
	Query  string `json:"query,omitempty" max:"1024"`
	Limit  int    `json:"limit,omitempty" max:"500"`
	Cursor string `json:"cursor,omitempty" max:"256"`
}

// SessionSummary is one row of ctxls.session.list.
type SessionSummary struct {
	ID           string      `json:"id"`
	Title        string      `json:"title"`
	TitleSource  TitleSource `json:"titleSource"`
	CreatedAt    time.Time   `json:"createdAt"`
	UpdatedAt    time.Time   `json:"updatedAt"`
	MessageCount int         `json:"messageCount"` // every stored message, tool results and summaries included
	FileCount    int         `json:"fileCount"`
	// Questions is how many questions the user asked in the session (its
	// user messages), and FirstQuestion the first one's first line, cut at
	// 120 characters: what tells two sessions of the same title apart.
	Questions     int    `json:"questions"`
	FirstQuestion string `json:"firstQuestion,omitempty"`
	// Owner and Visibility are set in the PostgreSQL store only.
	Owner      string     `json:"owner,omitempty"`
	Visibility Visibility `json:"visibility,omitempty"`
	// Workspace is the folder the session was last used in; Folder its
	// session folder.
	Workspace string `json:"workspace,omitempty"`
	Folder    string `json:"folder,omitempty"`
}

// SessionListResult is the result of ctxls.session.list.
type SessionListResult struct {
	V          int              `json:"v"`
	Sessions   []SessionSummary `json:"sessions"`
	NextCursor string           `json:"nextCursor,omitempty"`
}

// ShowResult is the result of ctxls.session.show.
type ShowResult struct {
	V        int       `json:"v"`
	Session  *Session  `json:"session"`
	Messages []Message `json:"messages"`
}

// SessionRenameArgs is the argument of ctxls.session.rename.
type SessionRenameArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Title     string `json:"title" max:"200"`
}

// DeleteResult is the result of ctxls.session.delete.
type DeleteResult struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId"`
	Deleted   bool   `json:"deleted"`
}

// SessionSearchArgs is the argument of ctxls.session.search.
type SessionSearchArgs struct {
	Query string `json:"query" max:"1024"`
	Limit int    `json:"limit,omitempty" max:"200"`
}

// SearchResult is the result of ctxls.session.search.
type SearchResult struct {
	V    int   `json:"v"`
	Hits []Hit `json:"hits"`
}

// SessionExportArgs is the argument of ctxls.session.export.
type SessionExportArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Format    string `json:"format,omitempty" max:"16"` // "markdown" (default) or "json"
}

// SessionShareArgs is the argument of ctxls.session.share.
type SessionShareArgs struct {
	SessionID  string     `json:"sessionId,omitempty" max:"64"`
	Visibility Visibility `json:"visibility" max:"16"` // "private" or "team"
}

// ExportResult is the result of ctxls.session.export.
type ExportResult struct {
	V       int    `json:"v"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

// ContextSetArgs is the argument of ctxls.context.set.
type ContextSetArgs struct {
	SessionID string   `json:"sessionId,omitempty" max:"64"`
	SetName   string   `json:"setName" max:"64"`
	Items     []string `json:"items" max:"100" itemMax:"4096"`
	Mode      string   `json:"mode,omitempty" max:"16"` // "replace" (default) or "merge"
}

// ContextSetResult is the result of ctxls.context.set.
type ContextSetResult struct {
	V        int      `json:"v"`
	SetName  string   `json:"setName"`
	Items    []string `json:"items"`
	Warnings []string `json:"warnings"`
}

// ContextGetArgs is the argument of ctxls.context.get.
type ContextGetArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	SetName   string `json:"setName,omitempty" max:"64"`
}

// ContextGetResult is the result of ctxls.context.get.
type ContextGetResult struct {
	V       int     `json:"v"`
	Context Context `json:"context"`
	// Instructions are the project's instructions files a turn would give
	// the model with this context (the workspace roots' and those of the
	// `files` set's folders; a turn's own files may bring more), absent
	// when none or when projectInstructions is off. Only without setName.
	Instructions []InstructionFile `json:"instructions,omitempty"`
}

// InstructionFile is a project instructions file (AGENTS.md, CLAUDE.md,
// .github/copilot-instructions.md) given to the model at the start of its
// input.
type InstructionFile struct {
	Path string `json:"path"`
	// Bytes is how much of its text is given; Size its whole length.
	Bytes int `json:"bytes"`
	Size  int `json:"size"`
	// Unsaved: the editor's text, with edits not yet saved.
	Unsaved bool `json:"unsaved,omitempty"`
	// Cut says what was left out (the caps: 32 KiB a file, 64 KiB in all).
	Cut string `json:"cut,omitempty"`
}

// CandidatesResult is the result of ctxls.context.candidates.
type CandidatesResult struct {
	V     int         `json:"v"`
	Files []Candidate `json:"files"`
}

// WorkspaceFilesArgs is the argument of ctxls.workspace.files.
type WorkspaceFilesArgs struct {
	Query string `json:"query,omitempty" max:"256"`
	Limit int    `json:"limit,omitempty" max:"200"`
}

// WorkspaceFile is one file of ctxls.workspace.files.
type WorkspaceFile struct {
	// Path is relative to its workspace folder (with several folders,
	// starting with the folder's name).
	Path string `json:"path"`
}

// WorkspaceFilesResult is the result of ctxls.workspace.files.
type WorkspaceFilesResult struct {
	V         int             `json:"v"`
	Files     []WorkspaceFile `json:"files"`
	Truncated bool            `json:"truncated"`
}

// FilesAddArgs is the argument of ctxls.files.add: either Path, or Name
// with ContentBase64.
type FilesAddArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Path      string `json:"path,omitempty" max:"4096"`
	Name      string `json:"name,omitempty" max:"255"`
	// 25 MiB, base64-encoded.
	ContentBase64 string `json:"contentBase64,omitempty" max:"34952536" limitDoc:"34952536 bytes (25 MiB decoded)"`
}

// FilesAddResult is the result of ctxls.files.add.
type FilesAddResult struct {
	V    int    `json:"v"`
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// FilesListArgs is the argument of ctxls.files.list.
type FilesListArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Subdir    string `json:"subdir,omitempty" max:"64"`
}

// FilesListResult is the result of ctxls.files.list.
type FilesListResult struct {
	V     int      `json:"v"`
	Files []string `json:"files"`
}

// FilesReadArgs is the argument of ctxls.files.read.
type FilesReadArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Subdir    string `json:"subdir,omitempty" max:"64"` // default sources
	Name      string `json:"name" max:"4096"`           // as ctxls.files.list gives it
}

// FilesReadResult is the result of ctxls.files.read.
type FilesReadResult struct {
	V         int    `json:"v"`
	Subdir    string `json:"subdir"`
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty"`
	Binary    bool   `json:"binary,omitempty"`
}

// MaxReadBytes is how much of a file ctxls.files.read returns.
const MaxReadBytes = 1 << 20

// FilesRemoveArgs is the argument of ctxls.files.remove.
type FilesRemoveArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Name      string `json:"name" max:"255"`
}

// FilesRemoveResult is the result of ctxls.files.remove.
type FilesRemoveResult struct {
	V       int    `json:"v"`
	Name    string `json:"name"`
	Removed bool   `json:"removed"`
}

// DocumentGetArgs is the argument of ctxls.document.get.
type DocumentGetArgs struct {
	URI string `json:"uri" max:"16384"`
}

// DocumentGetResult is the result of ctxls.document.get.
type DocumentGetResult struct {
	V       int    `json:"v"`
	URI     string `json:"uri"`
	Version int32  `json:"version"`
	Text    string `json:"text"`
}

// ChatArgs are the params of ctxls/chat and the argument of ctxls.chat.
type ChatArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	Message   string `json:"message,omitempty" max:"1048576"` // required unless rewind is given
	// Files go with this turn only: paths (relative to the workspace, or
	// absolute), each optionally naming the lines the user selected,
	// "main.go:5-8" or "main.go:12" (the model is told, the file is sent
	// whole).
	Files         []string        `json:"files,omitempty" max:"50" itemMax:"4096"`
	WorkDoneToken json.RawMessage `json:"workDoneToken,omitempty" max:"256"`
	// Rewind asks one of the session's questions again: the id of a user
	// message. That question and everything after it are removed, then
	// the turn asks message in its place (absent or empty: the same text
	// again, to regenerate or retry its answer; another text edits and
	// resends it). The session must be given or current.
	Rewind int64 `json:"rewind,omitempty" max:"9007199254740991" limitDoc:"a question's message id"`
	// Images go with the question: base64 data URLs
	// ("data:image/png;base64,…") of PNG, JPEG, GIF or WebP images of at
	// most 5 MiB each. They are copied into the session folder's sources/
	// and named in the question by a line each, "[image: sources/NAME]";
	// the model gets them as image parts at this turn and the later ones.
	Images []string `json:"images,omitempty" max:"10" itemMax:"7000000" limitDoc:"10 data URLs, each of an image of at most 5 MiB"`
}

// Finish reasons of a chat result.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishCancelled = "cancelled"
	FinishError     = "error"
)

// ChatUsage is a turn's token usage.
type ChatUsage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// CachedTokens: how much of the prompts the provider read from its
	// cache, at a discount (absent when it did not say).
	CachedTokens int `json:"cachedTokens,omitempty"`
}

// ChatResult is the result of a chat turn.
type ChatResult struct {
	V            int       `json:"v"`
	SessionID    string    `json:"sessionId"`
	MessageID    int64     `json:"messageId"`
	Text         string    `json:"text"`
	FinishReason string    `json:"finishReason"`
	Usage        ChatUsage `json:"usage"`
	// Edited are the user's files the turn's edits changed (applied in
	// the editor, or written), absent when none.
	Edited []string `json:"edited,omitempty"`
	// Instructions are the project's instructions files the model was
	// given, absent when none.
	Instructions []InstructionFile `json:"instructions,omitempty"`
}

// ChatPreviewResult is the result of ctxls.chat.preview.
type ChatPreviewResult struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId,omitempty"` // "" for a new session's first turn
	Model     string `json:"model"`
	// ReviewMode is how the turn's edits would be reviewed (the session's;
	// "ask" for a new one); with "off" only tools that read are among Tools.
	ReviewMode ReviewMode       `json:"reviewMode"`
	Messages   []PreviewMessage `json:"messages"`
	Tools      []PreviewTool    `json:"tools"`
	Tokens     PreviewTokens    `json:"tokens"`
	Budget     int              `json:"budget"`
	Dropped    int              `json:"dropped"`
	// Instructions are the project's instructions files at the end of the
	// system message, in its order (the root's first), absent when none.
	Instructions []InstructionFile `json:"instructions,omitempty"`
	// Files are the files that go with this question: those given in files
	// and those its message mentions (@main.go), each absolute, with ":N"
	// or ":N-M" when it names lines, as the question would be stored with
	// them. The context's files go too and are not listed. Absent when none.
	Files []string `json:"files,omitempty"`
}

// PreviewMessage is one message of the model input, as sent.
type PreviewMessage struct {
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	ToolCalls  []PreviewToolCall `json:"toolCalls,omitempty"`
	ToolCallID string            `json:"toolCallId,omitempty"`
	// Tokens is the content's size in the model's tokens.
	Tokens int `json:"tokens"`
}

// PreviewToolCall is a tool call of an earlier answer in the history.
type PreviewToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// PreviewTool is a tool offered to the model.
type PreviewTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Tokens      int             `json:"tokens"` // its name, description and schema
}

// PreviewTokens are a preview's token counts.
type PreviewTokens struct {
	System  int `json:"system"`
	History int `json:"history"`
	Files   int `json:"files"`
	// Tools is what the tools' names, descriptions and schemas cost
	// (ctxls's own and the MCP servers'); they count in the budget.
	Tools int `json:"tools"`
	Total int `json:"total"`
}

// ContextChangedParams are the params of ctxls/contextChanged.
type ContextChangedParams struct {
	SessionID string   `json:"sessionId"`
	Reason    string   `json:"reason"` // "resume" or "changed"
	Context   Context  `json:"context"`
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Missing   []string `json:"missing"`
	// Applet is the applet set parsed, present when the session has one.
	Applet *Applet `json:"applet,omitempty"`
}

// Applet is the "applet" context set [slug, "key=value", ...] as an
// object: the first item is the slug, each later item a parameter (an item
// without "=" is a key with an empty value).
type Applet struct {
	Slug   string            `json:"slug"`
	Params map[string]string `json:"params"`
}

// DidChangeViewParams are the params of ctxls/didChangeView.
type DidChangeViewParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Selection    *Range                 `json:"selection,omitempty"`
	VisibleRange *Range                 `json:"visibleRange,omitempty"`
}

// TextDocumentIdentifier is LSP's {uri}.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// Range is LSP's range: zero-based lines, characters in the negotiated
// position encoding.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Position is LSP's position.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// SessionUpdatedParams are the params of ctxls/sessionUpdated.
type SessionUpdatedParams struct {
	SessionID   string      `json:"sessionId"`
	Title       string      `json:"title"`
	TitleSource TitleSource `json:"titleSource"`
	// CompactedThrough is set when the session was just compacted: the
	// last message id its new summary covers (the model's view starts
	// after it).
	CompactedThrough int64 `json:"compactedThrough,omitempty"`
}

// SessionCompactResult is the result of ctxls.session.compact.
type SessionCompactResult struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId"`
	// Summary is the stored summary; Summary.SummaryOf is its range.
	Summary          Message `json:"summary"`
	CompactedThrough int64   `json:"compactedThrough"`
	Covered          int     `json:"covered"`
	Tokens           int     `json:"tokens"`
}

// UndoArgs is the argument of ctxls.session.undo.
type UndoArgs struct {
	SessionID string `json:"sessionId,omitempty" max:"64"`
	// From undoes every turn from this question (a user message id) on,
	// newest first, in place of the most recent turn alone.
	From int64 `json:"from,omitempty" max:"9007199254740991" limitDoc:"a question's message id"`
}

// UndoResult is the result of ctxls.session.undo and ctxls.session.redo.
type UndoResult struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId"`
	// Turn is the id of the user message whose turn was undone or redone.
	Turn int64 `json:"turn"`
	// Restored are the files undone (redone); Left those left as they
	// were, each with why.
	Restored []string   `json:"restored"`
	Left     []LeftFile `json:"left"`
}

// LeftFile is a file an undo or redo left as it was.
type LeftFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SessionUsageResult is the result of ctxls.session.usage.
type SessionUsageResult struct {
	V         int    `json:"v"`
	SessionID string `json:"sessionId"`
	// Answers counts the answers with usage; Unreported those without.
	Answers          int          `json:"answers"`
	Unreported       int          `json:"unreported"`
	PromptTokens     int          `json:"promptTokens"`
	CompletionTokens int          `json:"completionTokens"`
	CachedTokens     int          `json:"cachedTokens"` // of PromptTokens, read from the provider's cache
	Models           []ModelUsage `json:"models"`
}

// ModelUsage is what one model's answers in a session cost.
type ModelUsage struct {
	Model            string `json:"model"`
	Answers          int    `json:"answers"`
	PromptTokens     int    `json:"promptTokens"`
	CompletionTokens int    `json:"completionTokens"`
	CachedTokens     int    `json:"cachedTokens"`
}

// MCPListArgs is the argument of ctxls.mcp.list.
type MCPListArgs struct {
	// Tools starts each server and lists its tools.
	Tools bool `json:"tools,omitempty"`
}

// MCPListResult is the result of ctxls.mcp.list.
type MCPListResult struct {
	V              int                `json:"v"`
	Servers        []MCPServer        `json:"servers"`
	WorkspaceFiles []MCPWorkspaceFile `json:"workspaceFiles"`
	Errors         []string           `json:"errors"` // servers the configuration cannot use
	Notes          []string           `json:"notes"`  // servers named again, and which won
}

// MCPServer is one configured MCP server.
type MCPServer struct {
	Name           string    `json:"name"`
	Source         string    `json:"source"`
	Type           string    `json:"type"` // "stdio" or "http"
	Command        string    `json:"command,omitempty"`
	Args           []string  `json:"args,omitempty"`
	URL            string    `json:"url,omitempty"`
	EnvKeys        []string  `json:"envKeys"`
	HeaderKeys     []string  `json:"headerKeys"`
	TimeoutSeconds int       `json:"timeoutSeconds"`
	Running        bool      `json:"running"` // this daemon has it running (a turn needed it)
	Tools          []MCPTool `json:"tools,omitempty"`
	Error          string    `json:"error,omitempty"` // why its tools could not be listed
	// ToolsLeftOut counts the entries of its tool list that are no tools
	// the protocol allows (a name that is not a string, …), left out; the
	// others are used. LeftOutReasons says why, for the first 20.
	ToolsLeftOut   int      `json:"toolsLeftOut,omitempty"`
	LeftOutReasons []string `json:"leftOutReasons,omitempty"`
}

// MCPTrustArgs is the argument of ctxls.mcp.trust.
type MCPTrustArgs struct {
	Path  string `json:"path" max:"4096"`
	Trust bool   `json:"trust"`
}

// MCPTrustResult is the result of ctxls.mcp.trust: the file as decided.
type MCPTrustResult struct {
	V int `json:"v"`
	MCPWorkspaceFile
}

// MCPWorkspaceFile is a workspace's .mcp.json and where it stands.
type MCPWorkspaceFile struct {
	Path string `json:"path"`
	// State is "trusted", "distrusted", "undecided" (the user was not
	// asked yet, or it changed since), or "unreadable".
	State   string   `json:"state"`
	Servers []string `json:"servers"` // the names it configures
	Error   string   `json:"error,omitempty"`
}

// Workspace file states.
const (
	TrustTrusted    = "trusted"
	TrustDistrusted = "distrusted"
	TrustUndecided  = "undecided"
	TrustUnreadable = "unreadable"
)

// MCPTool is a tool an MCP server offers.
type MCPTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"readOnly"`
}

// ByRemote is ctxls/sessionFilesChanged's `by` for a file changed by
// another daemon on the same PostgreSQL store (who is not known there).
const ByRemote = "remote"

// SessionFilesChangedParams are the params of ctxls/sessionFilesChanged.
// ReviewEditParams are the params of ctxls/reviewEdit.
type ReviewEditParams struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"` // the tool call's (ctxls/toolCall)
	Path      string `json:"path"`
	URI       string `json:"uri"`
	Create    bool   `json:"create,omitempty"`
	OldText   string `json:"oldText"`
	NewText   string `json:"newText"`
	Diff      string `json:"diff"`
	Summary   string `json:"summary"`
}

// DiagnosticsParams are the params of ctxls/diagnostics.
type DiagnosticsParams struct {
	// URIs are the files asked about; absent: every file the editor has
	// diagnostics for.
	URIs []string `json:"uris,omitempty"`
	// WaitMs: answer once the diagnostics of those files have changed after
	// the request arrived, or after WaitMs milliseconds (0: at once).
	WaitMs int `json:"waitMs,omitempty"`
}

// FileDiagnostics is one file's diagnostics, in the answer to
// ctxls/diagnostics.
type FileDiagnostics struct {
	URI         string       `json:"uri"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// Diagnostic is LSP's Diagnostic (the fields ctxls reads).
type Diagnostic struct {
	// Range: zero-based lines, characters in the negotiated position
	// encoding.
	Range Range `json:"range"`
	// Severity is LSP's DiagnosticSeverity; absent counts as an error.
	Severity DiagnosticSeverity `json:"severity,omitempty"`
	// Code is the diagnostic's code: a number or a string.
	Code    json.RawMessage `json:"code,omitempty" ts:"number | string"`
	Source  string          `json:"source,omitempty"`
	Message string          `json:"message"`
}

// DiagnosticSeverity is LSP's: 1 error, 2 warning, 3 information, 4 hint.
type DiagnosticSeverity int

// Diagnostic severities.
const (
	SeverityError       DiagnosticSeverity = 1
	SeverityWarning     DiagnosticSeverity = 2
	SeverityInformation DiagnosticSeverity = 3
	SeverityHint        DiagnosticSeverity = 4
)

// ReviewDecision is the user's answer to ctxls/reviewEdit.
type ReviewDecision string

// Review decisions.
const (
	ReviewAccept    ReviewDecision = "accept"
	ReviewAcceptAll ReviewDecision = "acceptAll"
	ReviewReject    ReviewDecision = "reject"
)

// ReviewEditResult is the answer to ctxls/reviewEdit.
type ReviewEditResult struct {
	Decision ReviewDecision `json:"decision"`
	// Text, with accept or acceptAll, is the file's whole text as the user
	// chose it from the proposal (some of its changes taken, others left
	// out), in place of newText; absent: newText.
	Text *string `json:"text,omitempty" max:"33554432"`
}

// ToolStatus is where a tool call stands (ctxls/toolCall).
type ToolStatus string

// Tool call statuses.
const (
	ToolPending  ToolStatus = "pending"
	ToolRunning  ToolStatus = "running"
	ToolDone     ToolStatus = "done"
	ToolFailed   ToolStatus = "failed"
	ToolDeclined ToolStatus = "declined"
	// ToolCancelled: the call's turn was cancelled while the call waited
	// for the user (permission, review) or ran.
	ToolCancelled ToolStatus = "cancelled"
)

// PlanParams are the params of ctxls/plan: the session's whole plan.
type PlanParams struct {
	SessionID string      `json:"sessionId"`
	Entries   []PlanEntry `json:"entries"`
}

// ToolCallParams are the params of ctxls/toolCall.
type ToolCallParams struct {
	SessionID string     `json:"sessionId"`
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Server    string     `json:"server,omitempty"`
	Tool      string     `json:"tool"`
	Arguments string     `json:"arguments"`
	Status    ToolStatus `json:"status"`
	Progress  string     `json:"progress,omitempty"`
	Output    string     `json:"output,omitempty"`
	Summary   string     `json:"summary,omitempty"`
}

type SessionFilesChangedParams struct {
	SessionID string `json:"sessionId"`
	Subdir    string `json:"subdir"` // sources, results, scripts or data
	Name      string `json:"name"`   // the path below subdir, "/"-separated
	Size      int64  `json:"size"`   // bytes; 0 for a removal
	By        string `json:"by"`     // "model", "user" or ByRemote
	Removed   bool   `json:"removed,omitempty"`
}
