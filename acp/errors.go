package acp

import (
	"context"
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// rpcError is the ACP door's one error mapper: the error's kind gives the
// code from the ACP column of api.ErrorKinds and goes along as data
// {"kind": ...}, with the message a person reads. Errors of the SDK's own
// pass as they are.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re
	}
	err = service.Fail(err) // a kind for the door's own reads
	kind := api.KindOf(err)
	if kind == api.KindInternal && errors.Is(err, context.Canceled) {
		kind = api.KindCancelled
	}
	return &sdk.RequestError{Code: kind.Info().ACP, Message: err.Error(), Data: api.ErrorData{Kind: kind}}
}

// invalid is an invalidArgument error with a message.
func invalid(msg string) error {
	return rpcError(api.Errorf(api.KindInvalidArgument, "%s", msg))
}
