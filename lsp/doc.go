// Package lsp is ctxls's LSP door: framing (stream.go), dispatch
// (dispatch.go), lifecycle (lifecycle.go), text synchronisation
// (text_sync.go), the editor's view (view.go), the custom commands
// (execute_command.go: every one through api.Dispatch to the connection's
// service.Service), chat turns streamed as $/progress (chat.go), the
// service's events as notifications (events.go), settings (settings.go) and
// live updates (live.go), the model's edits (edits.go) and the editor's
// diagnostics for the model (diagnostics.go: ctxls/diagnostics, asked from
// the turn's goroutine), one file per area. Handlers decode, call the
// service and return; errors.go maps an error's kind to its JSON-RPC code.
//
// Ordering: notifications (didOpen, didChange, didClose, didSave,
// ctxls/didChangeView and its alias didFocus, didChangeWorkspaceFolders,
// $/cancelRequest, exit) run inline on the read loop, in wire order.
// didChangeView only arms a timer: the idle view is written to the store
// on the timer's goroutine (view.go), never on the read loop.
// Requests pass the lifecycle check inline, then release the read loop with
// jsonrpc2.Async and run concurrently, each with a context cancelled by
// $/cancelRequest. So a request always sees every edit sent before it, and a
// slow request never delays a later edit or command. Changes other daemons
// make (the PostgreSQL store's live updates) are read and announced on the
// connection's watch goroutine (live.go), apart from both.
package lsp
