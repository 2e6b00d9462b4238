package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
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
	rows, err := s.db.QueryContext(ctx, `SELECT id, turn, path, created, start, removed, inserted, before_hash, after_hash, on_disk, undone, toggled_at, created_at
		FROM file_edits WHERE session_id = ? ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.FileEdit
	for rows.Next() {
		c := session.FileEdit{SessionID: sessionID}
		var at, toggled int64
		if err := rows.Scan(&c.ID, &c.Turn, &c.Path, &c.Created, &c.Start, &c.Removed, &c.Inserted, &c.BeforeHash, &c.AfterHash, &c.OnDisk, &c.Undone, &toggled, &at); err != nil {
			return nil, err
		}
		c.CreatedAt = time.UnixMilli(at)
		if toggled != 0 {
			c.ToggledAt = time.UnixMilli(toggled)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetUndone marks changes of a session undone or not and notes it for
// the model (session.EditLog).
func (s *Store) SetUndone(ctx context.Context, sessionID string, ids []int64, undone bool, note string) error {
	ids = session.Distinct(ids)
	if len(ids) == 0 && note == "" {
		return nil
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.touch(ctx, tx, sessionID); err != nil {
			return err
		}
		if len(ids) > 0 {
			args := []any{undone, s.millis(), sessionID}
			for _, id := range ids {
				args = append(args, id)
			}
			res, err := tx.ExecContext(ctx, "UPDATE file_edits SET undone = ?, toggled_at = ? WHERE session_id = ? AND id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", args...)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != int64(len(ids)) {
				return fmt.Errorf("changes %v of session %s: %w", ids, sessionID, session.ErrNotFound)
			}
		}
		if note == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.editNotes', "+
			"json_insert(coalesce(json_extract("+metaJSON+", '$.editNotes'), '[]'), '$[#]', ?)) WHERE id = ?", note, sessionID)
		return err
	})
}

// TakeEditNotes removes the first n of the session's edit notes
// (session.EditLog).
func (s *Store) TakeEditNotes(ctx context.Context, sessionID string, n int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var meta string
		if err := tx.QueryRowContext(ctx, "SELECT "+metaJSON+" FROM sessions WHERE id = ?", sessionID).Scan(&meta); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return session.NotFound(sessionID)
			}
			return err
		}
		var m session.Meta
		json.Unmarshal([]byte(meta), &m)
		rest := m.EditNotes[min(n, len(m.EditNotes)):]
		if len(rest) == 0 {
			_, err := tx.ExecContext(ctx, "UPDATE sessions SET meta = json_remove("+metaJSON+", '$.editNotes') WHERE id = ?", sessionID)
			return err
		}
		b, _ := json.Marshal(rest)
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.editNotes', json(?)) WHERE id = ?", string(b), sessionID)
		return err
	})
}
