package session

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Meta fields are written one at a time, each with its own JSON path inside
// one statement, so writers of different fields never overwrite each other
// (no read-modify-write of the whole object).

// metaJSON is the session's meta as SQLite JSON, '{}' if it is not JSON.
const metaJSON = "CASE WHEN json_valid(meta) THEN meta ELSE '{}' END"

// MarkTitleRequested records that the model is being asked for the
// session's title. It reports false when that was already recorded, so the
// title is asked for once per session even with several processes.
func (s *SQLite) MarkTitleRequested(ctx context.Context, id string) (bool, error) {
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
func (s *SQLite) ClearTitleRequested(ctx context.Context, id string) error {
	res, err := s.exec(ctx, "UPDATE sessions SET meta = json_remove("+metaJSON+", '$.titleRequested') WHERE id = ?", id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(id)
	}
	return nil
}

// MaxModel is the longest model name a session accepts, in bytes.
const MaxModel = 200

// SetModel sets the model the session's turns use; "" goes back to the
// provider's default. It returns the session as it is afterwards.
func (s *SQLite) SetModel(ctx context.Context, id, model string) (*Session, error) {
	model, err := validModel(model)
	if err != nil {
		return nil, err
	}
	var ss *Session
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

// validModel checks a model name, trimmed.
func validModel(model string) (string, error) {
	model = strings.TrimSpace(model)
	switch {
	case len(model) > MaxModel:
		return "", invalid("model is %d bytes long; the limit is %d", len(model), MaxModel)
	case !utf8.ValidString(model):
		return "", invalid("model is not valid UTF-8")
	case hasControl(model) || strings.ContainsAny(model, " \t"):
		return "", invalid("model %q must not contain spaces or control characters", truncate(model, 60))
	}
	return model, nil
}

// MinIDPrefix is the shortest id prefix ResolveID accepts.
const MinIDPrefix = 4

// AmbiguousError is ResolveID's answer to a prefix of several sessions' ids.
type AmbiguousError struct {
	Prefix     string
	Candidates []Candidate // the most recently active first
	More       bool        // more sessions match than listed
}

// Candidate is one session an ambiguous prefix matches.
type Candidate struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session id prefix %q is ambiguous; it matches:", e.Prefix)
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s  %s", c.ID, c.Title)
	}
	if e.More {
		b.WriteString("\n  …and more")
	}
	b.WriteString("\ngive more characters of the id")
	return b.String()
}

// Unwrap makes an AmbiguousError an ErrInvalid.
func (e *AmbiguousError) Unwrap() error { return ErrInvalid }

// ResolveID returns the id of the one session whose id is prefix or starts
// with it, as git resolves abbreviated commits: at least MinIDPrefix
// characters, case-insensitive. A prefix of several ids is an
// *AmbiguousError listing them; one of none is ErrNotFound.
func (s *SQLite) ResolveID(ctx context.Context, prefix string) (string, error) {
	p, err := checkIDPrefix(prefix)
	if err != nil {
		return "", err
	}
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p)
	rows, err := s.db.QueryContext(ctx, `SELECT id, title FROM sessions WHERE id LIKE ? ESCAPE '\'
		ORDER BY id = ? DESC, updated_at DESC, id DESC LIMIT ?`, escaped+"%", p, shownCandidates+1)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var found []Candidate
	for rows.Next() {
		var c Candidate
		if err := rows.Scan(&c.ID, &c.Title); err != nil {
			return "", err
		}
		found = append(found, c)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return resolved(prefix, p, found)
}

// shownCandidates is how many sessions an ambiguous prefix lists.
const shownCandidates = 5

// checkIDPrefix lowers and trims an id prefix, refusing a short one.
func checkIDPrefix(prefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(prefix))
	if utf8.RuneCountInString(p) < MinIDPrefix {
		return "", invalid("session id %q is too short: give the id or at least its first %d characters", truncate(prefix, 80), MinIDPrefix)
	}
	return p, nil
}

// resolved picks the answer from the sessions a prefix p matched, an exact
// match first, at most shownCandidates+1 of them.
func resolved(prefix, p string, found []Candidate) (string, error) {
	switch {
	case len(found) == 0:
		return "", fmt.Errorf("session %q: %w (no session id starts with it)", truncate(prefix, 80), ErrNotFound)
	case len(found) == 1 || found[0].ID == p:
		return found[0].ID, nil
	}
	amb := &AmbiguousError{Prefix: p, Candidates: found}
	if len(found) > shownCandidates {
		amb.Candidates, amb.More = found[:shownCandidates], true
	}
	return "", amb
}

// FirstExchange returns the session's first user message and its first
// complete answer (an assistant message with text and no tool calls), ""
// for either that does not exist yet. A failed or interrupted answer is not
// complete, so it never counts as the first.
func (s *SQLite) FirstExchange(ctx context.Context, id string) (first, answer string, err error) {
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
func (s *SQLite) SetWorkspace(ctx context.Context, id, dir string) error {
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) || !utf8.ValidString(dir) || hasControl(dir) {
		return invalid("workspace %q must be an absolute path", truncate(dir, 200))
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
func (s *SQLite) Share(ctx context.Context, id string, _ Visibility) (*Session, error) {
	if _, err := s.folderOf(ctx, id); err != nil {
		return nil, err
	}
	return nil, invalid("sharing needs the PostgreSQL store (--store postgres://…); sessions in the local store are on this machine only")
}
