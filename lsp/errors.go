package lsp

import (
	"context"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// RequestCancelled is the LSP error code for a request the client cancelled.
const RequestCancelled jsonrpc2.Code = -32800

// RequestFailed is the LSP error code for a request that was valid but
// could not be carried out now (a second turn in a busy session).
const RequestFailed jsonrpc2.Code = -32803

// toRPCError is the one place where errors become JSON-RPC errors. Domain
// errors a person can act on become InvalidParams with their message kept;
// cancellation becomes RequestCancelled; a store whose database cannot be
// reached, RequestFailed with a message saying so; anything else is an internal error,
// message kept. No error is ever answered with code 0.
func toRPCError(ctx context.Context, err error) *jsonrpc2.Error {
	var rpcErr *jsonrpc2.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code != 0:
		return rpcErr
	case errors.Is(err, chat.ErrBusy):
		return jsonrpc2.NewError(RequestFailed, err.Error())
	case errors.Is(err, context.Canceled) || ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return jsonrpc2.NewError(RequestCancelled, "request cancelled")
	case errors.Is(err, session.ErrNotFound),
		errors.Is(err, session.ErrInvalid),
		errors.Is(err, session.ErrTooLarge),
		errors.Is(err, buffer.ErrNotOpen):
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, err.Error())
	case errors.Is(chat.StoreError(err), chat.ErrStoreUnreachable):
		// PostgreSQL is down or cut off: the driver's "broken pipe" is
		// logged, the person reads what happened.
		return jsonrpc2.NewError(RequestFailed, chat.StoreError(err).Error())
	}
	return jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
}
