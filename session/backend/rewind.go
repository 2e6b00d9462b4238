package backend

import (
	"context"

	"github.com/ctxls/ctxls/session"
)

var _ session.Rewinder = (*Pending)(nil)

// Rewind waits for the open, then rewinds (session.Rewinder).
func (p *Pending) Rewind(ctx context.Context, sessionID string, fromID int64) (int, error) {
	st, err := p.wait(ctx)
	if err != nil {
		return 0, err
	}
	r, ok := st.(session.Rewinder)
	if !ok {
		return 0, session.Invalidf("this store cannot remove messages")
	}
	return r.Rewind(ctx, sessionID, fromID)
}
