package chat

import (
	"errors"

	"github.com/ctxls/ctxls/session/backend"
)

// ErrStoreUnreachable: the session store's database could not be reached
// (PostgreSQL stopped, restarting or cut off). Errors that say so wrap it
// (StoreError); the doors answer them as a request that failed for now.
var ErrStoreUnreachable = errors.New("the session database cannot be reached")

// storeUnreachable is an error of the store's that says the database
// could not be reached; Error is what a person reads, Unwrap the driver's
// error (logged, never shown raw).
type storeUnreachable struct{ err error }

func (e *storeUnreachable) Error() string {
	return "the session database (PostgreSQL) cannot be reached: it stopped, is restarting or the network to it failed; what was saved is kept, and ctxls reconnects by itself once it is back"
}

func (e *storeUnreachable) Is(target error) bool { return target == ErrStoreUnreachable }
func (e *storeUnreachable) Unwrap() error        { return e.err }

// StoreError returns err as ErrStoreUnreachable when it says the store's
// database could not be reached, otherwise err unchanged. Only errors of
// store calls are given to it: a provider's network error is the
// provider's (it arrives as *url.Error, which is never taken for the
// store's).
func StoreError(err error) error {
	if err == nil || errors.Is(err, ErrStoreUnreachable) || !unreachable(err) {
		return err
	}
	return &storeUnreachable{err: err}
}

// unreachable reports whether err says the store's database is gone (see
// backend.IsUnavailable).
func unreachable(err error) bool { return backend.IsUnavailable(err) }
