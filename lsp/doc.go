// Package lsp is ctxls's protocol edge: LSP framing (stream.go), dispatch
// (dispatch.go), lifecycle, text synchronisation and the custom commands,
// one file per area. Handlers decode, call the domain packages (buffer,
// session, prompts) and return; errors.go maps errors to JSON-RPC codes.
//
// Ordering: notifications (didOpen, didChange, didClose, didSave, didFocus,
// $/cancelRequest, exit) run inline on the read loop, in wire order.
// Requests pass the lifecycle check inline, then release the read loop with
// jsonrpc2.Async and run concurrently, each with a context cancelled by
// $/cancelRequest. So a request always sees every edit sent before it, and a
// slow request never delays a later edit or command.
package lsp
