package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ctxls/ctxls/session"
)

var _ session.EditLog = (*Store)(nil)

// RecordEdit stores one change the model made to a file
// (session.EditLog).
func (s *Store) RecordEdit(ctx context.Context, c *session.FileEdit) error {
	if err := session.CheckEdit(c); err != nil {
		return err
	}
	now := time.UnixMilli(time.Now().UnixMilli())
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", c.SessionID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return session.NotFound(c.SessionID)
			}
			return err
		}
		return tx.QueryRowContext(ctx, `INSERT INTO file_edits
			(session_id, turn, path, created, start, removed, inserted, before_hash, after_hash, on_disk, undone, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			c.SessionID, c.Turn, c.Path, c.Created, c.Start, c.Removed, c.Inserted, c.BeforeHash, c.AfterHash, c.OnDisk, c.Undone, now.UnixMilli()).Scan(&c.ID)
	})
	if err == nil {
		c.CreatedAt = now
	}
	return err
}

// Changes lists a session's changes, oldest first (session.EditLog).
func (s *Store) Edits(ctx context.Context, sessionID string) ([]session.FileEdit, error) {
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, turn, path, created, start, removed, inserted, before_hash, after_hash, on_disk, undone, created_at
		FROM file_edits WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.FileEdit
	for rows.Next() {
		c := session.FileEdit{SessionID: sessionID}
		var at int64
		if err := rows.Scan(&c.ID, &c.Turn, &c.Path, &c.Created, &c.Start, &c.Removed, &c.Inserted, &c.BeforeHash, &c.AfterHash, &c.OnDisk, &c.Undone, &at); err != nil {
			return nil, err
		}
		c.CreatedAt = time.UnixMilli(at)
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
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.touch(ctx, tx, sessionID); err != nil {
			return err
		}
		args := []any{undone, sessionID}
		for _, id := range ids {
			args = append(args, id)
		}
		res, err := tx.ExecContext(ctx, "UPDATE file_edits SET undone = ? WHERE session_id = ? AND id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != int64(len(ids)) {
			return fmt.Errorf("changes %v of session %s: %w", ids, sessionID, session.ErrNotFound)
		}
		return nil
	})
}
