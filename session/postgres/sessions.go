package postgres

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The PostgreSQL store's sessions: the same rules as the SQLite store's
// (session.go, meta.go, env.go), in PostgreSQL's SQL. meta is jsonb, and
// each field is written on its own, as in SQLite.

const pgSessionColumns = `s.id, s.title, s.title_source, s.created_at, s.updated_at, s.meta::text, s.folder,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
	(SELECT count(*) FROM files f WHERE f.session_id = s.id AND f.subdir = 'sources'),
	s.owner::text, s.visibility`

// pgSessionFiles follows pgSessionColumns where the session is read with
// every file of its folder, as the mirror needs them (pgFile): one
// statement instead of two for each read that brings the mirror up to date.
const pgSessionFiles = `, coalesce(fl.subs, '{}'), coalesce(fl.names, '{}'), coalesce(fl.updated, '{}'), coalesce(fl.sizes, '{}')
	FROM sessions s LEFT JOIN LATERAL (SELECT array_agg(f.subdir) subs, array_agg(f.name) names,
		array_agg(f.updated_at) updated, array_agg(octet_length(f.content)::bigint) sizes
		FROM files f WHERE f.session_id = s.id) fl ON true`

// scanSession scans pgSessionColumns, then extra.
func (s *Store) scanSession(row pgx.Row, extra ...any) (*session.Session, error) {
	var (
		ss               session.Session
		created, updated int64
		meta, folder     string
	)
	if err := row.Scan(append([]any{&ss.ID, &ss.Title, &ss.TitleSource, &created, &updated, &meta, &folder,
		&ss.MessageCount, &ss.FileCount, &ss.Owner, &ss.Visibility}, extra...)...); err != nil {
		return nil, err
	}
	ss.CreatedAt, ss.UpdatedAt = session.FromMillis(created), session.FromMillis(updated)
	_ = json.Unmarshal([]byte(meta), &ss.Meta)
	ss.Folder = s.folderPath(folder)
	return &ss, nil
}

// row reads one session as the database has it, without the mirror.
func (s *Store) row(ctx context.Context, q pgQuerier, id string) (*session.Session, error) {
	ss, err := s.scanSession(q.QueryRow(ctx, "SELECT "+pgSessionColumns+" FROM sessions s WHERE s.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, session.NotFound(id)
	}
	return ss, err
}

// rowFiles is row with the session's files, for the mirror (syncFiles).
func (s *Store) rowFiles(ctx context.Context, q pgQuerier, id string) (*session.Session, []pgFile, error) {
	return s.scanRowFiles(q.QueryRow(ctx, pgSessionWithFiles, id), id)
}

// pgSessionWithFiles reads a session ($1) with its files (rowFiles).
const pgSessionWithFiles = "SELECT " + pgSessionColumns + pgSessionFiles + " WHERE s.id = $1"

// scanRowFiles scans the row of pgSessionWithFiles for session id.
func (s *Store) scanRowFiles(row pgx.Row, id string) (*session.Session, []pgFile, error) {
	var (
		subs, names    []string
		updated, sizes []int64
	)
	ss, err := s.scanSession(row, &subs, &names, &updated, &sizes)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, session.NotFound(id)
	}
	if err != nil {
		return nil, nil, err
	}
	files := make([]pgFile, len(names))
	for i := range files {
		files[i] = pgFile{sub: subs[i], name: names[i], updated: updated[i], size: sizes[i]}
	}
	return ss, files, nil
}

// Create makes a session and its mirror folder. An empty title gives
// DefaultTitle with source "auto"; a title given is the user's.
func (s *Store) Create(ctx context.Context, title string) (*session.Session, error) {
	source := session.TitleUser
	if strings.TrimSpace(title) == "" {
		title, source = session.DefaultTitle, session.TitleAuto
	}
	title, err := session.ValidTitle(title)
	if err != nil {
		return nil, err
	}
	id := session.NewID()
	now := s.millis()
	folder := session.FolderName(session.FromMillis(now), title, id)
	if _, err := s.pool.Exec(ctx,
		"INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES ($1, $2, $3, $4, $5, $6)",
		id, title, source, now, now, folder); err != nil {
		return nil, err
	}
	if err := s.writeHistory(ctx, id); err != nil { // makes the folder too
		return nil, err
	}
	return s.Get(ctx, id)
}

// Get returns one session, with its mirror folder brought up to date.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	ss, _, err := s.get(ctx, id)
	return ss, err
}

// get is Get, also returning the session's files as the mirror has them
// now.
func (s *Store) get(ctx context.Context, id string) (*session.Session, []pgFile, error) {
	ss, files, err := s.rowFiles(ctx, s.pool, id)
	if err != nil {
		return nil, nil, err
	}
	if err := s.syncFolder(ctx, ss, files); err != nil {
		return nil, nil, err
	}
	return ss, files, nil
}

// List returns sessions, most recent activity first, and a cursor for the
// next page ("" at the end).
func (s *Store) List(ctx context.Context, opt session.ListOptions) ([]session.Session, string, error) {
	limit, err := session.PageLimit(opt.Limit, 50, 500)
	if err != nil {
		return nil, "", err
	}
	where := []string{"true"}
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if opt.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(opt.Cursor)
		var c session.Cursor
		if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" {
			return nil, "", session.Invalidf("cursor %q is not one this server returned", session.Truncate(opt.Cursor, 60))
		}
		u, i := arg(c.U), arg(c.ID)
		where = append(where, "(s.updated_at < "+u+" OR s.updated_at = "+u+" AND s.id < "+i+")")
	}
	if q := strings.TrimSpace(opt.Query); q != "" {
		escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
		where = append(where, `s.title ILIKE `+arg("%"+escaped+"%")+` ESCAPE '\'`)
	}
	if opt.Workspace != "" {
		where = append(where, "s.meta->>'workspace' = "+arg(opt.Workspace))
	}
	if opt.NonEmpty {
		where = append(where, "NOT ("+pgEmptyRow+")")
	}
	query := "SELECT " + pgSessionColumns + " FROM sessions s WHERE " + strings.Join(where, " AND ") +
		" ORDER BY s.updated_at DESC, s.id DESC LIMIT " + arg(limit+1)
	out, err := s.list(ctx, query, args...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		b, _ := json.Marshal(session.Cursor{U: last.UpdatedAt.UnixMilli(), ID: last.ID})
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	return out, next, nil
}

func (s *Store) list(ctx context.Context, query string, args ...any) ([]session.Session, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []session.Session{}
	for rows.Next() {
		ss, err := s.scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *ss)
	}
	return out, rows.Err()
}

// Rename sets a session's title; the mirror folder follows its new name.
func (s *Store) Rename(ctx context.Context, id, title string, source session.TitleSource) (*session.Session, error) {
	ss, _, err := s.renameIf(ctx, id, title, source, nil)
	return ss, err
}

// renameIf renames only if cond (when not nil) accepts the current title
// and source; the check and the change are one transaction, the row locked.
func (s *Store) renameIf(ctx context.Context, id, title string, source session.TitleSource, cond func(string, session.TitleSource) bool) (*session.Session, bool, error) {
	title, err := session.ValidTitle(title)
	if err != nil {
		return nil, false, err
	}
	changed := false
	var written *session.Session
	var files []pgFile
	var from, to string // the mirror folder moved, if it did
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			curTitle, folder string
			curSource        session.TitleSource
			created          int64
		)
		err := tx.QueryRow(ctx, "SELECT created_at, title, title_source, folder FROM sessions WHERE id = $1 FOR UPDATE", id).Scan(&created, &curTitle, &curSource, &folder)
		if errors.Is(err, pgx.ErrNoRows) {
			return session.NotFound(id)
		}
		if err != nil {
			return err
		}
		if cond != nil && !cond(curTitle, curSource) {
			return nil
		}
		newFolder := session.FolderName(session.FromMillis(created), title, id)
		if _, err := tx.Exec(ctx, "UPDATE sessions SET title = $1, title_source = $2, folder = $3 WHERE id = $4",
			title, source, newFolder, id); err != nil {
			return err
		}
		if err := s.touch(ctx, tx, id); err != nil {
			return err
		}
		changed = true
		// The session as this rename left it, whatever another daemon
		// does after the commit.
		if written, files, err = s.rowFiles(ctx, tx, id); err != nil {
			return err
		}
		if newFolder == folder {
			return nil
		}
		// This machine's folder moves before the commit, so a name taken
		// here refuses the rename as in the SQLite store; other machines
		// move theirs when they next look (placeFolder).
		return s.withLocal(ctx, func() error {
			old, err := s.placeFolder(ctx, id, folder)
			if err != nil {
				return err
			}
			if _, err := os.Lstat(s.folderPath(newFolder)); err == nil {
				return fmt.Errorf("renaming the session folder: %s is there already", s.folderPath(newFolder))
			}
			if err := os.Rename(old, s.folderPath(newFolder)); err != nil {
				return fmt.Errorf("renaming the session folder: %w", err)
			}
			from, to = old, s.folderPath(newFolder)
			return nil
		})
	})
	if err != nil {
		if to != "" {
			// Not committed: the folder goes back under the lock.
			s.withLocal(context.WithoutCancel(ctx), func() error { return os.Rename(to, from) })
		}
		return nil, false, err
	}
	if !changed {
		return nil, false, nil
	}
	if err := s.syncFolder(ctx, written, files); err != nil {
		return nil, true, err
	}
	return written, true, s.history.Later(ctx, id)
}

// SetTitleIfAuto replaces an "auto" title with one the model suggested.
func (s *Store) SetTitleIfAuto(ctx context.Context, id, title string) (bool, error) {
	return s.setTitleIf(ctx, id, title, session.TitleModel, session.TitleIsAuto)
}

// SetAutoTitle sets an "auto" title if the title is still the default one.
func (s *Store) SetAutoTitle(ctx context.Context, id, title string) (bool, error) {
	return s.setTitleIf(ctx, id, title, session.TitleAuto, session.TitleIsDefault)
}

func (s *Store) setTitleIf(ctx context.Context, id, title string, source session.TitleSource, cond func(string, session.TitleSource) bool) (bool, error) {
	var cur string
	var src session.TitleSource
	err := s.pool.QueryRow(ctx, "SELECT title, title_source FROM sessions WHERE id = $1", id).Scan(&cur, &src)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, session.NotFound(id)
	}
	if err != nil {
		return false, err
	}
	if !cond(cur, src) {
		return false, nil
	}
	_, changed, err := s.renameIf(ctx, id, title, source, cond)
	return changed, err
}

// Delete removes a session with its messages, context and files, and this
// machine's mirror folder. Only its owner may.
func (s *Store) Delete(ctx context.Context, id string) error {
	var folder string
	err := s.pool.QueryRow(ctx, "DELETE FROM sessions WHERE id = $1 RETURNING folder", id).Scan(&folder)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.notOwner(ctx, id, "delete")
	}
	if err != nil {
		return err
	}
	s.history.Cache.Forget(id)
	return s.removeFolder(ctx, id, folder)
}

// notOwner explains why a change only an owner may make matched nothing:
// the session is not there for this role, or it is another's.
func (s *Store) notOwner(ctx context.Context, id, what string) error {
	var owner string
	err := s.pool.QueryRow(ctx, "SELECT owner::text FROM sessions WHERE id = $1", id).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.NotFound(id)
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: session %s belongs to %s; only its owner may %s it", session.ErrPermission, session.Truncate(id, 80), owner, what)
}

// removeFolder removes a deleted session's mirror folder: under its name,
// and under an older one (renamed elsewhere, not followed here yet).
func (s *Store) removeFolder(ctx context.Context, id, folder string) error {
	err := s.withLocal(ctx, func() error { return os.RemoveAll(s.folderPath(folder)) })
	if err == nil {
		err = s.removeMirror(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("session deleted, but its folder could not be removed: %w", err)
	}
	return nil
}

// Share sets the session's visibility; only its owner may (the database's
// share function checks).
func (s *Store) Share(ctx context.Context, id string, visibility session.Visibility) (*session.Session, error) {
	if visibility != session.VisibilityPrivate && visibility != session.VisibilityTeam {
		return nil, session.Invalidf("visibility must be %q or %q, got %q", session.VisibilityPrivate, session.VisibilityTeam, session.Truncate(string(visibility), 40))
	}
	var ss *session.Session
	var files []pgFile
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT share($1, $2)", id, string(visibility)); err != nil {
			return err
		}
		var err error
		ss, files, err = s.rowFiles(ctx, tx, id)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege: not the owner's
		return nil, s.notOwner(ctx, id, "share")
	}
	if err != nil {
		return nil, err
	}
	return ss, s.syncFolder(ctx, ss, files)
}

// PruneInactive deletes this role's sessions with no activity before
// cutoff (see sqlite.Store.PruneInactive). Team sessions of others are left to
// their owners.
func (s *Store) PruneInactive(ctx context.Context, cutoff time.Time, dryRun bool) ([]session.Session, error) {
	list, err := s.list(ctx, "SELECT "+pgSessionColumns+" FROM sessions s WHERE s.updated_at < $1 AND s.owner = session_user ORDER BY s.updated_at, s.id", cutoff.UnixMilli())
	if err != nil || dryRun {
		return list, err
	}
	out := []session.Session{}
	for _, ss := range list {
		var folder string
		err := s.pool.QueryRow(ctx, "DELETE FROM sessions WHERE id = $1 AND updated_at < $2 RETURNING folder", ss.ID, cutoff.UnixMilli()).Scan(&folder)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // active again, or deleted by someone else
		}
		if err != nil {
			return out, err
		}
		if err := s.removeFolder(ctx, ss.ID, folder); err != nil {
			return out, fmt.Errorf("session %s: %w", ss.ID, err)
		}
		out = append(out, ss)
	}
	return out, nil
}

// pgEmptyRow is true for an empty session's row (see session.EmptyAfter).
const pgEmptyRow = `s.title_source <> 'user'
	AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
	AND NOT EXISTS (SELECT 1 FROM files f WHERE f.session_id = s.id)
	AND NOT EXISTS (SELECT 1 FROM context_items c WHERE c.session_id = s.id AND c.set_name <> 'applet')`

// PruneEmpty deletes this role's empty sessions with no activity since
// cutoff, but those in keep (see session.Storage). The database is shared
// by daemons on several machines: cutoff (session.EmptyAfter ago) is what
// keeps a session another daemon has just made, and the row is checked
// again in its DELETE.
func (s *Store) PruneEmpty(ctx context.Context, cutoff time.Time, keep []string) ([]string, error) {
	if keep == nil {
		keep = []string{}
	}
	rows, err := s.pool.Query(ctx, `DELETE FROM sessions s WHERE s.id IN (
			SELECT s.id FROM sessions s WHERE s.owner = session_user AND s.updated_at < $1 AND s.id <> ALL($2) AND `+pgEmptyRow+`)
		AND s.updated_at < $1 AND `+pgEmptyRow+` RETURNING s.id, s.folder`, cutoff.UnixMilli(), keep)
	if err != nil {
		return nil, err
	}
	type gone struct{ id, folder string }
	var deleted []gone
	for rows.Next() {
		var g gone
		if err := rows.Scan(&g.id, &g.folder); err != nil {
			rows.Close()
			return nil, err
		}
		deleted = append(deleted, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := []string{}
	for _, g := range deleted {
		s.history.Cache.Forget(g.id)
		if err := s.removeFolder(ctx, g.id, g.folder); err != nil {
			return out, fmt.Errorf("empty session %s: %w", g.id, err)
		}
		out = append(out, g.id)
	}
	return out, nil
}

// MarkTitleRequested records that the model is being asked for the title;
// false when that was already recorded.
func (s *Store) MarkTitleRequested(ctx context.Context, id string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET meta = jsonb_set(meta, '{titleRequested}', 'true')
		WHERE id = $1 AND NOT coalesce((meta->>'titleRequested')::boolean, false)`, id)
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	return false, s.exists(ctx, s.pool, id)
}

// ClearTitleRequested forgets that the title was asked for.
func (s *Store) ClearTitleRequested(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, "UPDATE sessions SET meta = meta - 'titleRequested' WHERE id = $1", id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return session.NotFound(id)
	}
	return nil
}

// SetModel sets the model the session's turns use ("" for the default).
func (s *Store) SetModel(ctx context.Context, id, model string) (*session.Session, error) {
	model, err := session.ValidModel(model)
	if err != nil {
		return nil, err
	}
	var ss *session.Session
	var files []pgFile
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if model == "" {
			_, err = tx.Exec(ctx, "UPDATE sessions SET meta = meta - 'model' WHERE id = $1", id)
		} else {
			_, err = tx.Exec(ctx, "UPDATE sessions SET meta = jsonb_set(meta, '{model}', to_jsonb($2::text)) WHERE id = $1", id, model)
		}
		if err != nil {
			return err
		}
		if err := s.touch(ctx, tx, id); err != nil {
			return err
		}
		ss, files, err = s.rowFiles(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ss, s.syncFolder(ctx, ss, files)
}

// SetReviewMode sets how the model's edits are reviewed.
func (s *Store) SetReviewMode(ctx context.Context, id, mode string) (*session.Session, error) {
	if err := session.ValidReviewMode(mode); err != nil {
		return nil, err
	}
	tag, err := s.pool.Exec(ctx, "UPDATE sessions SET meta = jsonb_set(meta, '{reviewMode}', to_jsonb($2::text)) WHERE id = $1", id, mode)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, s.exists(ctx, s.pool, id)
	}
	return s.Get(ctx, id)
}

// SetPlan replaces the session's plan.
func (s *Store) SetPlan(ctx context.Context, id string, items []session.PlanItem) ([]session.PlanItem, error) {
	items, err := session.ValidPlan(items)
	if err != nil {
		return nil, err
	}
	q, args := "UPDATE sessions SET meta = meta - 'plan' WHERE id = $1", []any{id}
	if len(items) > 0 {
		b, _ := json.Marshal(items)
		q, args = "UPDATE sessions SET meta = jsonb_set(meta, '{plan}', $2::jsonb) WHERE id = $1", append(args, string(b))
	}
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, s.exists(ctx, s.pool, id)
	}
	return items, nil
}

// SetToolPermission records a standing decision about a tool.
func (s *Store) SetToolPermission(ctx context.Context, id, tool, decision string) error {
	if err := session.ValidToolPermission(tool, decision); err != nil {
		return err
	}
	q := "UPDATE sessions SET meta = jsonb_set(meta, '{tools}', coalesce(meta->'tools', '{}'::jsonb) || jsonb_build_object($2::text, $3::text)) WHERE id = $1"
	args := []any{id, tool, decision}
	if decision == "" {
		q = "UPDATE sessions SET meta = jsonb_set(meta, '{tools}', coalesce(meta->'tools', '{}'::jsonb) - $2::text) WHERE id = $1"
		args = args[:2]
	}
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.exists(ctx, s.pool, id)
	}
	return nil
}

// SetEnvHint records the session's envHint when it differs; not activity.
func (s *Store) SetEnvHint(ctx context.Context, id, hint string) (bool, error) {
	hint = session.CleanEnvHint(hint)
	var tag pgconn.CommandTag
	var err error
	if hint == "" {
		tag, err = s.pool.Exec(ctx, "UPDATE sessions SET meta = meta - 'envHint' WHERE id = $1 AND meta->>'envHint' IS NOT NULL", id)
	} else {
		tag, err = s.pool.Exec(ctx, "UPDATE sessions SET meta = jsonb_set(meta, '{envHint}', to_jsonb($2::text)) WHERE id = $1 AND meta->>'envHint' IS DISTINCT FROM $2", id, hint)
	}
	if err != nil {
		return false, err
	}
	if tag.RowsAffected() > 0 {
		return true, nil
	}
	return false, s.exists(ctx, s.pool, id)
}

// SetWorkspace records the folder the session is used in; not activity.
func (s *Store) SetWorkspace(ctx context.Context, id, dir string) error {
	if dir == "" {
		return nil
	}
	if !filepath.IsAbs(dir) || !utf8.ValidString(dir) || session.HasControl(dir) {
		return session.Invalidf("workspace %q must be an absolute path", session.Truncate(dir, 200))
	}
	dir = filepath.Clean(dir)
	tag, err := s.pool.Exec(ctx, "UPDATE sessions SET meta = jsonb_set(meta, '{workspace}', to_jsonb($2::text)) WHERE id = $1 AND meta->>'workspace' IS DISTINCT FROM $2", id, dir)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.exists(ctx, s.pool, id)
	}
	return nil
}

// ResolveID returns the id of the one session whose id starts with prefix
// (see sqlite.Store.ResolveID).
func (s *Store) ResolveID(ctx context.Context, prefix string) (string, error) {
	p, err := session.CheckIDPrefix(prefix)
	if err != nil {
		return "", err
	}
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p)
	rows, err := s.pool.Query(ctx, `SELECT id, title FROM sessions WHERE id LIKE $1 ESCAPE '\'
		ORDER BY id = $2 DESC, updated_at DESC, id DESC LIMIT $3`, escaped+"%", p, session.ShownCandidates+1)
	if err != nil {
		return "", err
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (session.Candidate, error) {
		var c session.Candidate
		return c, r.Scan(&c.ID, &c.Title)
	})
	if err != nil {
		return "", err
	}
	return session.ResolvedID(prefix, p, found)
}

// FirstExchange returns the first user message and the first complete
// answer (see sqlite.Store.FirstExchange).
func (s *Store) FirstExchange(ctx context.Context, id string) (first, answer string, err error) {
	if err := s.exists(ctx, s.pool, id); err != nil {
		return "", "", err
	}
	err = s.pool.QueryRow(ctx, `SELECT
		coalesce((SELECT content FROM messages WHERE session_id = $1 AND role = 'user' ORDER BY id LIMIT 1), ''),
		coalesce((SELECT content FROM messages WHERE session_id = $1 AND role = 'assistant' AND status = 'complete'
			AND content <> '' AND tool_calls IS NULL ORDER BY id LIMIT 1), '')`, id).Scan(&first, &answer)
	return first, answer, err
}
