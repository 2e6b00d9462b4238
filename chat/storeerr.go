package chat

import (
	"errors"
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

// Unreachable returns err, which the store's backend says could not reach
// its database, as ErrStoreUnreachable (nil and an err that is one already
// unchanged).
func Unreachable(err error) error {
	if err == nil || errors.Is(err, ErrStoreUnreachable) {
		return err
	}
	return &storeUnreachable{err: err}
}

// storeError returns err, from a store call, as ErrStoreUnreachable when
// the store's backend says its database could not be reached, otherwise
// unchanged. A provider's network error is the provider's (it arrives as
// *url.Error, which Unavailable never takes for the store's).
func (e *Engine) storeError(err error) error {
	if err == nil || e.Unavailable == nil || errors.Is(err, ErrStoreUnreachable) || !e.Unavailable(err) {
		return err
	}
	return Unreachable(err)
}
