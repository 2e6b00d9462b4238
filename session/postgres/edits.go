package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ctxls/ctxls/session"
)

var _ session.EditLog = (*Store)(nil)

// RecordEdit stores one change the model made to a file
// (session.EditLog).
func (s *Store) RecordEdit(ctx context.Context, c *session.FileEdit) error {
	if err := session.CheckEdit(c); err != nil {
		return err
	}
	err := s.pool.QueryRow(ctx, `INSERT INTO file_edits
		(session_id, turn, path, created, start, removed, inserted, before_hash, after_hash, on_disk, undone)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $1)
		RETURNING id, created_at`,
		c.SessionID, c.Turn, c.Path, c.Created, c.Start, c.Removed, c.Inserted, c.BeforeHash, c.AfterHash, c.OnDisk, c.Undone).Scan(&c.ID, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.NotFound(c.SessionID)
	}
	return err
}

// Edits lists a session's changes, oldest first (session.EditLog).
func (s *Store) Edits(ctx context.Context, sessionID string) ([]session.FileEdit, error) {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1 FROM sessions WHERE id = $1", sessionID).Scan(&one); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, session.NotFound(sessionID)
		}
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, turn, path, created, start, removed, inserted, before_hash, after_hash, on_disk, undone, created_at
		FROM file_edits WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.FileEdit
	for rows.Next() {
		c := session.FileEdit{SessionID: sessionID}
		var start int64
		if err := rows.Scan(&c.ID, &c.Turn, &c.Path, &c.Created, &start, &c.Removed, &c.Inserted, &c.BeforeHash, &c.AfterHash, &c.OnDisk, &c.Undone, &c.CreatedAt); err != nil {
			return nil, err
		}
		c.Start = int(start)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetUndone marks changes of a session undone or not (session.EditLog).
func (s *Store) SetUndone(ctx context.Context, sessionID string, ids []int64, undone bool) error {
	ids = session.Distinct(ids)
	if len(ids) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.touch(ctx, tx, sessionID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, "UPDATE file_edits SET undone = $1 WHERE session_id = $2 AND id = ANY($3)", undone, sessionID, ids)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != int64(len(ids)) {
			return fmt.Errorf("changes %v of session %s: %w", ids, sessionID, session.ErrNotFound)
		}
		return nil
	})
}
