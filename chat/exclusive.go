package chat

import (
	"context"
	"errors"

	"github.com/ctxls/ctxls/session"
)

// Exclusive runs fn while no turn runs in the session, here or in another
// daemon (it holds the session as a turn does: claimed in this engine, and
// the store's turn lock); ErrBusy (or its elsewhere form) when one runs.
// Compaction and the undo and redo of a turn's changes use it, so they
// never cross a turn.
func (e *Engine) Exclusive(ctx context.Context, sessionID string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !e.claim(sessionID, cancel) {
		return ErrBusy
	}
	defer e.release(sessionID)
	unlock, _, err := e.Store.LockTurn(ctx, sessionID)
	if errors.Is(err, session.ErrTurnElsewhere) {
		return errBusyElsewhere
	}
	if err != nil {
		return e.storeError(err)
	}
	defer unlock()
	return fn(ctx)
}
