package postgres

import (
	"context"
	"errors"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
)

// Rewind removes question fromID of a session and every message after it
// (session.Rewinder). The session's row is locked first (touch), so an
// answer another machine appends waits for the removal and lands after.
func (s *Store) Rewind(ctx context.Context, sessionID string, fromID int64) (int, error) {
	var removed int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.touch(ctx, tx, sessionID); err != nil {
			return err
		}
		var role session.Role
		err := tx.QueryRow(ctx, "SELECT role FROM messages WHERE id = $1 AND session_id = $2", fromID, sessionID).Scan(&role)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var streaming bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM messages WHERE session_id = $1 AND status = 'streaming')", sessionID).Scan(&streaming); err != nil {
			return err
		}
		if err := session.CheckRewind(sessionID, fromID, role, streaming); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "DELETE FROM messages WHERE session_id = $1 AND id >= $2", sessionID, fromID)
		if err != nil {
			return err
		}
		removed = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.history.Cache.Forget(sessionID)
	return int(removed), s.history.Later(ctx, sessionID)
}
