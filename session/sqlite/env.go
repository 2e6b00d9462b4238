package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/ctxls/ctxls/session"
)

// SetEnvHint records a session's envHint (Meta.EnvHint), patching that one
// field of the meta in a write transaction so fields written by others are
// kept. It writes only when the hint differs from the stored one and
// reports whether it wrote. It does not count as activity: updatedAt is
// left alone, so resuming a session does not move it up the list.
func (s *Store) SetEnvHint(ctx context.Context, id, hint string) (bool, error) {
	hint = session.CleanEnvHint(hint)
	var cur string
	// A read answers the common "unchanged" without the write lock.
	err := s.db.QueryRowContext(ctx, "SELECT coalesce(json_extract(meta, '$.envHint'), '') FROM sessions WHERE id = ?", id).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return false, session.NotFound(id)
	}
	if err != nil {
		return false, err
	}
	if cur == hint {
		return false, nil
	}
	var changed bool
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var q string
		var args []any
		if hint == "" {
			q, args = "UPDATE sessions SET meta = json_remove(meta, '$.envHint') WHERE id = ? AND json_extract(meta, '$.envHint') IS NOT NULL", []any{id}
		} else {
			q, args = "UPDATE sessions SET meta = json_set(meta, '$.envHint', ?) WHERE id = ? AND coalesce(json_extract(meta, '$.envHint'), '') != ?", []any{hint, id, hint}
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		if !changed {
			// Unchanged, or deleted since the read.
			var one int
			if err := tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
				return session.NotFound(id)
			}
		}
		return nil
	})
	return changed, err
}
