package acp

import (
	"context"
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/turn"
)

// JSON-RPC error codes the agent answers with.
const (
	codeInvalidParams = -32602
	codeInternal      = -32603
	// codeBusy: a turn is already running in the session (LSP's
	// RequestFailed, which the LSP door uses for the same case).
	codeBusy = -32803
	// codeNoProvider: no usable provider is configured.
	codeNoProvider = -32001
)

// rpcError is the ACP door's one error mapper: every handler's error goes
// through it, so the same failure gets the same code and a message a person
// can act on.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var re *sdk.RequestError
	var pe *turn.ProviderError
	code := codeInternal
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, session.ErrNotFound), errors.Is(err, session.ErrInvalid):
		code = codeInvalidParams
	case errors.Is(err, chat.ErrBusy):
		code = codeBusy
	case errors.As(err, &pe):
		code = codeNoProvider
	case errors.Is(err, context.Canceled):
		return sdk.NewRequestCancelled(map[string]any{"error": err.Error()})
	case errors.Is(chat.StoreError(err), chat.ErrStoreUnreachable):
		err = chat.StoreError(err) // PostgreSQL is down: say so, not "broken pipe"
	}
	return &sdk.RequestError{Code: code, Message: err.Error()}
}

// invalid is an InvalidParams error with a message.
func invalid(msg string) error {
	return &sdk.RequestError{Code: codeInvalidParams, Message: msg}
}
