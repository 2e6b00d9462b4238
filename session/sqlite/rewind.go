package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/ctxls/ctxls/session"
)

// Rewind removes question fromID of a session and every message after it
// (session.Rewinder).
func (s *Store) Rewind(ctx context.Context, sessionID string, fromID int64) (int, error) {
	var removed int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, _, err := s.get(ctx, tx, sessionID); err != nil {
			return err
		}
		var role session.Role
		err := tx.QueryRowContext(ctx, "SELECT role FROM messages WHERE id = ? AND session_id = ?", fromID, sessionID).Scan(&role)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var streaming bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = ? AND status = 'streaming')", sessionID).Scan(&streaming); err != nil {
			return err
		}
		if err := session.CheckRewind(sessionID, fromID, role, streaming); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM messages WHERE session_id = ? AND id >= ?", sessionID, fromID)
		if err != nil {
			return err
		}
		removed, _ = res.RowsAffected()
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return 0, err
	}
	s.history.Cache.Forget(sessionID)
	return int(removed), s.historyLater(ctx, sessionID)
}
