package service

import (
	"context"
	"errors"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// fail gives err its kind: the one place where the domain's errors become
// api kinds. An *api.Error keeps its own; nil stays nil.
func fail(err error) error {
	if err == nil {
		return nil
	}
	var e *api.Error
	if errors.As(err, &e) {
		return err
	}
	kind := kindOf(err)
	if kind == api.KindStoreUnavailable {
		err = storeError(err) // PostgreSQL is down: say so, not "broken pipe"
	}
	return &api.Error{Kind: kind, Err: err}
}

// storeError returns err as chat.ErrStoreUnreachable when it says the
// store's database could not be reached (backend.IsUnavailable), else
// unchanged.
func storeError(err error) error {
	if err != nil && backend.IsUnavailable(err) {
		return chat.Unreachable(err)
	}
	return err
}

// Fail is fail for the doors' own errors about the domain (a door that
// reads the store for its protocol's sake).
func Fail(err error) error { return fail(err) }

func kindOf(err error) api.Kind {
	var amb *session.AmbiguousError
	switch {
	case errors.Is(err, context.Canceled):
		return api.KindCancelled
	case errors.Is(err, chat.ErrBusy), errors.Is(err, session.ErrTurnElsewhere):
		return api.KindBusy
	case errors.Is(err, session.ErrTooLarge), errors.Is(err, buffer.ErrNotHeld):
		return api.KindTooLarge
	case errors.Is(err, session.ErrNotFound), errors.Is(err, buffer.ErrNotOpen), errors.Is(err, chat.ErrSessionDeleted):
		return api.KindNotFound
	case errors.Is(err, session.ErrPermission):
		return api.KindPermissionDenied
	case errors.Is(err, session.ErrInvalid), errors.As(err, &amb):
		return api.KindInvalidArgument
	case errors.Is(err, chat.ErrProviderFailed):
		return api.KindProviderFailed
	case errors.Is(storeError(err), chat.ErrStoreUnreachable):
		return api.KindStoreUnavailable
	}
	return api.KindInternal
}
