package backend

import (
	"context"

	"github.com/ctxls/ctxls/session"
)

var _ session.EditLog = (*Pending)(nil)

// editLog waits for the open and gives the store's edit log.
func (p *Pending) editLog(ctx context.Context) (session.EditLog, error) {
	st, err := p.wait(ctx)
	if err != nil {
		return nil, err
	}
	l, ok := st.(session.EditLog)
	if !ok {
		return nil, session.Invalidf("this store keeps no changes to undo")
	}
	return l, nil
}

// RecordEdit waits for the open, then records (session.EditLog).
func (p *Pending) RecordEdit(ctx context.Context, c *session.FileEdit) error {
	l, err := p.editLog(ctx)
	if err != nil {
		return err
	}
	return l.RecordEdit(ctx, c)
}

// Edits waits for the open, then lists (session.EditLog).
func (p *Pending) Edits(ctx context.Context, sessionID string) ([]session.FileEdit, error) {
	l, err := p.editLog(ctx)
	if err != nil {
		return nil, err
	}
	return l.Edits(ctx, sessionID)
}

// SetUndone waits for the open, then marks (session.EditLog).
func (p *Pending) SetUndone(ctx context.Context, sessionID string, ids []int64, undone bool, note string) error {
	l, err := p.editLog(ctx)
	if err != nil {
		return err
	}
	return l.SetUndone(ctx, sessionID, ids, undone, note)
}

// TakeEditNotes waits for the open, then takes (session.EditLog).
func (p *Pending) TakeEditNotes(ctx context.Context, sessionID string, n int) error {
	l, err := p.editLog(ctx)
	if err != nil {
		return err
	}
	return l.TakeEditNotes(ctx, sessionID, n)
}
