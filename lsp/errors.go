package lsp

import (
	"context"
	"encoding/json"
	"errors"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/api"
)

// RequestCancelled is the LSP error code for a request the client cancelled.
const RequestCancelled jsonrpc2.Code = api.CodeRequestCancelled

// RequestFailed is the LSP error code for a request that was valid but
// could not be carried out now (a second turn in a busy session).
const RequestFailed jsonrpc2.Code = api.CodeRequestFailed

// toRPCError is the one place where errors become JSON-RPC errors: the
// error's kind (api.KindOf) gives the code from the LSP column of
// api.ErrorKinds and goes along as data {"kind": ...}; the message is kept.
// A request cancelled by the client is KindCancelled whatever its handler
// returned. Protocol errors of the door's own (a *jsonrpc2.Error with a
// code) pass as they are. No error is ever answered with code 0.
func toRPCError(ctx context.Context, err error) *jsonrpc2.Error {
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != 0 {
		return rpcErr
	}
	kind := api.KindOf(err)
	msg := err.Error()
	if kind != api.KindCancelled && (errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled)) {
		kind = api.KindCancelled
	}
	if kind == api.KindCancelled && api.KindOf(err) != api.KindCancelled {
		msg = "request cancelled"
	}
	e := jsonrpc2.NewError(jsonrpc2.Code(kind.Info().LSP), msg)
	e.Data, _ = json.Marshal(api.ErrorData{Kind: kind})
	return e
}
