// Package lsp is ctxls's protocol edge: LSP framing (stream.go), dispatch
// (dispatch.go), lifecycle, text synchronisation and the custom commands,
// one file per area. Handlers decode, call the domain packages (buffer,
// session, prompts) and return; errors.go maps errors to JSON-RPC codes.
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
