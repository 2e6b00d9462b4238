package sqlite

import (
	"context"

	"github.com/ctxls/ctxls/session"
)

// LockTurn has nothing to hold across processes in the SQLite store: the
// engine's own claim keeps one turn per session in a daemon.
func (s *Store) LockTurn(context.Context, string) (func(), <-chan struct{}, error) {
	return func() {}, nil, nil
}

// Watch has nothing to report in the SQLite store.
func (s *Store) Watch(context.Context, func(string) bool, func(session.Change)) error { return nil }
