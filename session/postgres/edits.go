package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	rows, err := s.pool.Query(ctx, `SELECT id, turn, path, created, start, removed, inserted, before_hash, after_hash, on_disk, undone, toggled_at, created_at
		FROM file_edits WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.FileEdit
	for rows.Next() {
		c := session.FileEdit{SessionID: sessionID}
		var start int64
		var toggled *time.Time
		if err := rows.Scan(&c.ID, &c.Turn, &c.Path, &c.Created, &start, &c.Removed, &c.Inserted, &c.BeforeHash, &c.AfterHash, &c.OnDisk, &c.Undone, &toggled, &c.CreatedAt); err != nil {
			return nil, err
		}
		c.Start = int(start)
		if toggled != nil {
			c.ToggledAt = *toggled
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
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.touch(ctx, tx, sessionID); err != nil {
			return err
		}
		if len(ids) > 0 {
			tag, err := tx.Exec(ctx, "UPDATE file_edits SET undone = $1, toggled_at = clock_timestamp() WHERE session_id = $2 AND id = ANY($3)", undone, sessionID, ids)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != int64(len(ids)) {
				return fmt.Errorf("changes %v of session %s: %w", ids, sessionID, session.ErrNotFound)
			}
		}
		if note == "" {
			return nil
		}
		_, err := tx.Exec(ctx, "UPDATE sessions SET meta = jsonb_set(meta, '{editNotes}', coalesce(meta->'editNotes', '[]'::jsonb) || to_jsonb($2::text)) WHERE id = $1", sessionID, note)
		return err
	})
}

// TakeEditNotes removes the first n of the session's edit notes
// (session.EditLog).
func (s *Store) TakeEditNotes(ctx context.Context, sessionID string, n int) error {
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET meta = CASE
		WHEN jsonb_array_length(coalesce(meta->'editNotes', '[]'::jsonb)) <= $2 THEN meta - 'editNotes'
		ELSE jsonb_set(meta, '{editNotes}', (SELECT jsonb_agg(e ORDER BY i) FROM jsonb_array_elements(meta->'editNotes') WITH ORDINALITY AS t(e, i) WHERE i > $2))
		END WHERE id = $1`, sessionID, n)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.exists(ctx, s.pool, sessionID)
	}
	return nil
}
