package sqlite

import (
	"context"
	"database/sql"

	"github.com/ctxls/ctxls/session"
)

// Context returns all sets of a session.
func (s *Store) Context(ctx context.Context, sessionID string) (session.Context, error) {
	return loadContext(ctx, s.db, sessionID)
}

type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func loadContext(ctx context.Context, q querier, sessionID string) (session.Context, error) {
	var exists int
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", sessionID).Scan(&exists); err != nil {
		return nil, err
	}
	if exists == 0 {
		return nil, session.NotFound(sessionID)
	}
	rows, err := q.QueryContext(ctx, "SELECT set_name, item FROM context_items WHERE session_id = ? ORDER BY set_name, position", sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	c := session.Context{}
	for rows.Next() {
		var name, item string
		if err := rows.Scan(&name, &item); err != nil {
			return nil, err
		}
		c[name] = append(c[name], item)
	}
	return c, rows.Err()
}

// AddedBy returns who added each item of a set (items kept from before a
// change keep their origin).
func (s *Store) AddedBy(ctx context.Context, sessionID, setName string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT item, added_by FROM context_items WHERE session_id = ? AND set_name = ?", sessionID, setName)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var item, by string
		if err := rows.Scan(&item, &by); err != nil {
			return nil, err
		}
		out[item] = by
	}
	return out, rows.Err()
}

// UpdateContext is the one operation that changes a set for every caller:
// the editor's command, the model's tool, ACP's /add and /drop, the CLI.
// Items of the files set are normalised first (file:// URIs converted,
// relative paths joined to the first of roots, folders refused); by is
// AddedByUser or AddedByModel.
func (s *Store) UpdateContext(ctx context.Context, sessionID, setName string, items []string, mode session.Mode, by string, roots []string) (*session.ContextChange, error) {
	items, err := session.NormalizeItems(setName, items, roots)
	if err != nil {
		return nil, err
	}
	return s.setContext(ctx, sessionID, setName, items, mode, by)
}

// setContext changes one set, recording who made the change (AddedByUser
// or AddedByModel) for the items it adds; UpdateContext normalises the
// items first.
func (s *Store) setContext(ctx context.Context, sessionID, setName string, items []string, mode session.Mode, by string) (*session.ContextChange, error) {
	req, err := session.NewContextRequest(setName, items, mode, by)
	if err != nil {
		return nil, err
	}
	var ch *session.ContextChange
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := loadContext(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		origin := map[string]string{}
		rows, err := tx.QueryContext(ctx, "SELECT item, added_by FROM context_items WHERE session_id = ? AND set_name = ?", sessionID, setName)
		if err != nil {
			return err
		}
		for rows.Next() {
			var item, who string
			if err := rows.Scan(&item, &who); err != nil {
				rows.Close()
				return err
			}
			origin[item] = who
		}
		rows.Close()
		var who []string
		if ch, who, err = req.Apply(cur, origin); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM context_items WHERE session_id = ? AND set_name = ?", sessionID, setName); err != nil {
			return err
		}
		for i, it := range ch.Items {
			if _, err := tx.ExecContext(ctx, "INSERT INTO context_items (session_id, set_name, position, item, added_by) VALUES (?, ?, ?, ?, ?)", sessionID, setName, i, it, who[i]); err != nil {
				return err
			}
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	if err := s.writeHistory(ctx, sessionID); err != nil {
		return nil, err
	}
	return ch, nil
}
