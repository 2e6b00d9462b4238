package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ctxls/ctxls/session"
)

// metaJSON is the session's meta as SQLite JSON, '{}' if it is not JSON.
const metaJSON = "CASE WHEN json_valid(meta) THEN meta ELSE '{}' END"

// MarkTitleRequested records that the model is being asked for the
// session's title. It reports false when that was already recorded, so the
// title is asked for once per session even with several processes.
func (s *Store) MarkTitleRequested(ctx context.Context, id string) (bool, error) {
	res, err := s.exec(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.titleRequested', json('true')) "+
		"WHERE id = ? AND coalesce(json_extract("+metaJSON+", '$.titleRequested'), 0) = 0", id)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	if _, err := s.folderOf(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

// ClearTitleRequested forgets that the title was asked for, so the next
// complete answer asks again.
func (s *Store) ClearTitleRequested(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "UPDATE sessions SET meta = json_remove("+metaJSON+", '$.titleRequested') WHERE id = ?", id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return session.NotFound(id)
	}
	return nil
}

// SetToolPermission records a standing decision about a tool.
func (s *Store) SetToolPermission(ctx context.Context, id, tool, decision string) error {
	if err := session.ValidToolPermission(tool, decision); err != nil {
		return err
	}
	var decided any = decision
	if decision == "" {
		decided = nil // json_patch removes a key set to null
	}
	patch, _ := json.Marshal(map[string]any{tool: decided})
	res, err := s.exec(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.tools', "+
		"json_patch(coalesce(json_extract("+metaJSON+", '$.tools'), '{}'), ?)) WHERE id = ?", string(patch), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return session.NotFound(id)
	}
	return nil
}

// SetReviewMode sets how the model's edits are reviewed.
func (s *Store) SetReviewMode(ctx context.Context, id, mode string) (*session.Session, error) {
	if err := session.ValidReviewMode(mode); err != nil {
		return nil, err
	}
	if _, err := s.exec(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.reviewMode', ?) WHERE id = ?", mode, id); err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

// SetPlan replaces the session's plan.
func (s *Store) SetPlan(ctx context.Context, id string, items []session.PlanItem) ([]session.PlanItem, error) {
	items, err := session.ValidPlan(items)
	if err != nil {
		return nil, err
	}
	var res sql.Result
	if len(items) == 0 {
		res, err = s.exec(ctx, "UPDATE sessions SET meta = json_remove("+metaJSON+", '$.plan') WHERE id = ?", id)
	} else {
		b, _ := json.Marshal(items)
		res, err = s.exec(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.plan', json(?)) WHERE id = ?", string(b), id)
	}
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, session.NotFound(id)
	}
	return items, nil
}

// SetModel sets the model the session's turns use; "" goes back to the
// provider's default. It returns the session as it is afterwards.
func (s *Store) SetModel(ctx context.Context, id, model string) (*session.Session, error) {
	model, err := session.ValidModel(model)
	if err != nil {
		return nil, err
	}
	var ss *session.Session
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if model == "" {
			_, err = tx.ExecContext(ctx, "UPDATE sessions SET meta = json_remove("+metaJSON+", '$.model') WHERE id = ?", id)
		} else {
			_, err = tx.ExecContext(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.model', ?) WHERE id = ?", model, id)
		}
		if err != nil {
			return err
		}
		if err := s.touch(ctx, tx, id); err != nil {
			return err
		}
		ss, _, err = s.get(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ss, nil
}

// ResolveID returns the id of the one session whose id is prefix or starts
// with it, as git resolves abbreviated commits: at least MinIDPrefix
// characters, case-insensitive. A prefix of several ids is an
// *AmbiguousError listing them; one of none is ErrNotFound.
func (s *Store) ResolveID(ctx context.Context, prefix string) (string, error) {
	p, err := session.CheckIDPrefix(prefix)
	if err != nil {
		return "", err
	}
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p)
	rows, err := s.db.QueryContext(ctx, `SELECT id, title FROM sessions WHERE id LIKE ? ESCAPE '\'
		ORDER BY id = ? DESC, updated_at DESC, id DESC LIMIT ?`, escaped+"%", p, session.ShownCandidates+1)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var found []session.Candidate
	for rows.Next() {
		var c session.Candidate
		if err := rows.Scan(&c.ID, &c.Title); err != nil {
			return "", err
		}
		found = append(found, c)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return session.ResolvedID(prefix, p, found)
}

// FirstExchange returns the session's first user message and its first
// complete answer (an assistant message with text and no tool calls), ""
// for either that does not exist yet. A failed or interrupted answer is not
// complete, so it never counts as the first.
func (s *Store) FirstExchange(ctx context.Context, id string) (first, answer string, err error) {
	if _, err := s.folderOf(ctx, id); err != nil {
		return "", "", err
	}
	err = s.db.QueryRowContext(ctx, `SELECT
		coalesce((SELECT content FROM messages WHERE session_id = ?1 AND role = 'user' ORDER BY id LIMIT 1), ''),
		coalesce((SELECT content FROM messages WHERE session_id = ?1 AND role = 'assistant' AND status = 'complete'
			AND content != '' AND tool_calls IS NULL ORDER BY id LIMIT 1), '')`, id).Scan(&first, &answer)
	return first, answer, err
}

// SetWorkspace records the folder the session is used in (an absolute
// path; "" is ignored). It writes only when the folder changed and does not
// touch updated_at: using a session somewhere is not activity in it.
func (s *Store) SetWorkspace(ctx context.Context, id, dir string) error {
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) || !utf8.ValidString(dir) || session.HasControl(dir) {
		return session.Invalidf("workspace %q must be an absolute path", session.Truncate(dir, 200))
	}
	res, err := s.exec(ctx, "UPDATE sessions SET meta = json_set("+metaJSON+", '$.workspace', ?) "+
		"WHERE id = ? AND coalesce(json_extract("+metaJSON+", '$.workspace'), '') != ?", filepath.Clean(dir), id, filepath.Clean(dir))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err = s.folderOf(ctx, id) // unchanged, or no such session
	}
	return err
}

// Share is refused: a local store's sessions are on this machine only.
func (s *Store) Share(ctx context.Context, id string, _ session.Visibility) (*session.Session, error) {
	if _, err := s.folderOf(ctx, id); err != nil {
		return nil, err
	}
	return nil, session.Invalidf("sharing needs the PostgreSQL store (--store postgres://…); sessions in the local store are on this machine only")
}
