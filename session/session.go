package session

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// TitleSource says who named a session.
type TitleSource string

// Title sources.
const (
	TitleAuto  TitleSource = "auto"  // from the first message, or the default
	TitleModel TitleSource = "model" // suggested by the model
	TitleUser  TitleSource = "user"  // set by the user; never overridden
)

// DefaultTitle names a session before its first message.
const DefaultTitle = "New session"

// Meta is what ctxls notes about a session's situation.
type Meta struct {
	EnvHint string `json:"envHint,omitempty"`
	// TitleRequested: the model was asked for a title after the first
	// complete answer (once per session; cleared by ClearTitleRequested).
	TitleRequested bool `json:"titleRequested,omitempty"`
	// Model is the session's model ("": the provider's default).
	Model string `json:"model,omitempty"`
	// Workspace is the folder the session was last used in: the editor's
	// first workspace folder, ACP's cwd, the CLI's working directory.
	Workspace string `json:"workspace,omitempty"`
}

// Session is one chat session.
type Session struct {
	ID           string      `json:"id"`
	Title        string      `json:"title"`
	TitleSource  TitleSource `json:"titleSource"`
	CreatedAt    time.Time   `json:"createdAt"`
	UpdatedAt    time.Time   `json:"updatedAt"`
	Meta         Meta        `json:"meta"`
	Folder       string      `json:"folder"`       // absolute path of the session folder
	MessageCount int         `json:"messageCount"` // messages stored
	FileCount    int         `json:"fileCount"`    // files directly in sources/ (not folders), hidden ones excluded
	// Owner and Visibility are the PostgreSQL store's: the role that made
	// the session, and who sees it. Empty in the local store.
	Owner      string     `json:"owner,omitempty"`
	Visibility Visibility `json:"visibility,omitempty"`
}

// Visibility says who sees a session in the PostgreSQL store.
type Visibility string

// Visibilities.
const (
	VisibilityPrivate Visibility = "private" // its owner only (the default)
	VisibilityTeam    Visibility = "team"    // every member of ctxls_user
)

// ListOptions select a page of sessions.
type ListOptions struct {
	Query  string // case-insensitive substring of the title
	Limit  int    // default 50, at most 500
	Cursor string // nextCursor of the previous page
	// Workspace keeps only the sessions last used in this folder.
	Workspace string
}

const maxTitle = 200

func validTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return "", invalid("title must not be empty")
	case len(title) > maxTitle:
		return "", invalid("title is %d bytes long; the limit is %d", len(title), maxTitle)
	case !utf8.ValidString(title):
		return "", invalid("title is not valid UTF-8")
	case hasControl(title):
		return "", invalid("title must not contain control characters")
	}
	return title, nil
}

// newID returns 128 random bits as 26 lowercase base32 characters.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Slug is the folder-friendly form of a title that a session folder's name
// carries: lowercase letters and digits, runs of anything else as one
// dash, at most 40 bytes, "untitled" when nothing is left.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 40 {
				break
			}
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "untitled"
	}
	return b.String()
}

func folderName(created time.Time, title, id string) string {
	return created.UTC().Format("2006-01-02T15-04-05") + "--" + Slug(title) + "--" + id[:6]
}

var subdirs = []string{"sources", "results", "scripts", "data"}

func (s *SQLite) folderPath(name string) string { return filepath.Join(s.dir, "sessions", name) }

// Create makes a session with its folder. An empty title gives
// DefaultTitle with source "auto"; a title given is the user's.
func (s *SQLite) Create(ctx context.Context, title string) (*Session, error) {
	source := TitleUser
	if strings.TrimSpace(title) == "" {
		title, source = DefaultTitle, TitleAuto
	}
	title, err := validTitle(title)
	if err != nil {
		return nil, err
	}
	id := newID()
	now := s.millis()
	folder := folderName(fromMillis(now), title, id)
	path := s.folderPath(folder)
	var ss *Session
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		// Inside the transaction: a folder left by a process killed before
		// its commit is one no live process is filling (see recoverFolders).
		for _, d := range subdirs {
			if err := os.MkdirAll(filepath.Join(path, d), 0o700); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES (?, ?, ?, ?, ?, ?)",
			id, title, source, now, now, folder); err != nil {
			return err
		}
		if err := s.writeHistoryTx(ctx, tx, id); err != nil {
			return err
		}
		ss, _, err = s.get(ctx, tx, id)
		return err
	})
	if err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	return ss, nil
}

const sessionColumns = `s.id, s.title, s.title_source, s.created_at, s.updated_at, s.meta, s.folder,
	s.message_count`

// scanSession reads a session row; moved is true when its folder was not
// where the row says (a rename in flight), so FileCount is not to be
// trusted.
func (s *SQLite) scanSession(row interface{ Scan(...any) error }) (ss *Session, moved bool, err error) {
	var (
		created, updated int64
		meta             string
		folder           string
	)
	ss = &Session{}
	if err := row.Scan(&ss.ID, &ss.Title, &ss.TitleSource, &created, &updated, &meta, &folder, &ss.MessageCount); err != nil {
		return nil, false, err
	}
	ss.CreatedAt, ss.UpdatedAt = fromMillis(created), fromMillis(updated)
	_ = json.Unmarshal([]byte(meta), &ss.Meta)
	ss.Folder = s.folderPath(folder)
	n, ok := countFiles(filepath.Join(ss.Folder, "sources"))
	ss.FileCount = n
	return ss, !ok, nil
}

// countFiles counts the files directly in dir as ListFiles lists them
// (folders and hidden names left out); ok is false when dir cannot be read.
func countFiles(dir string) (n int, ok bool) {
	err := walkFiles(dir, "", 0, func(string, fs.FileInfo) { n++ })
	return n, err == nil
}

// Get returns one session.
func (s *SQLite) Get(ctx context.Context, id string) (*Session, error) {
	ss, moved, err := s.get(ctx, s.db, id)
	if err == nil && moved {
		// Read again where the folder cannot move (see inFolder).
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			ss, _, err = s.get(ctx, tx, id)
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return ss, nil
}

// get reads one session through q (the database or a transaction).
func (s *SQLite) get(ctx context.Context, q querier, id string) (*Session, bool, error) {
	ss, moved, err := s.scanSession(q.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, notFound(id)
	}
	return ss, moved, err
}

// pageLimit is a page size asked for: def for 0, at most max, never
// negative.
func pageLimit(limit, def, max int) (int, error) {
	switch {
	case limit < 0:
		return 0, invalid("limit must not be negative")
	case limit == 0:
		return def, nil
	}
	return min(limit, max), nil
}

type cursor struct {
	U  int64  `json:"u"`
	ID string `json:"i"`
}

// List returns sessions, most recent activity first, and a cursor for the
// next page ("" at the end).
func (s *SQLite) List(ctx context.Context, opt ListOptions) ([]Session, string, error) {
	limit, err := pageLimit(opt.Limit, 50, 500)
	if err != nil {
		return nil, "", err
	}
	where := []string{"1"}
	var args []any
	if opt.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(opt.Cursor)
		var c cursor
		if err != nil || json.Unmarshal(raw, &c) != nil || c.ID == "" {
			return nil, "", invalid("cursor %q is not one this server returned", truncate(opt.Cursor, 60))
		}
		where = append(where, "(s.updated_at < ? OR s.updated_at = ? AND s.id < ?)")
		args = append(args, c.U, c.U, c.ID)
	}
	if q := strings.TrimSpace(opt.Query); q != "" {
		escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
		where = append(where, `s.title LIKE ? ESCAPE '\'`)
		args = append(args, "%"+escaped+"%")
	}
	if opt.Workspace != "" {
		where = append(where, "json_extract("+metaJSON+", '$.workspace') = ?")
		args = append(args, opt.Workspace)
	}
	args = append(args, limit+1)
	query := "SELECT " + sessionColumns + " FROM sessions s WHERE " + strings.Join(where, " AND ") +
		" ORDER BY s.updated_at DESC, s.id DESC LIMIT ?"
	out, moved, err := s.list(ctx, s.db, query, args)
	if err == nil && moved {
		// A folder moved while it was read: read again where none can move.
		err = s.inTx(ctx, func(tx *sql.Tx) error {
			out, _, err = s.list(ctx, tx, query, args)
			return err
		})
	}
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		b, _ := json.Marshal(cursor{U: last.UpdatedAt.UnixMilli(), ID: last.ID})
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	return out, next, nil
}

func (s *SQLite) list(ctx context.Context, q querier, query string, args []any) (out []Session, anyMoved bool, err error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	out = []Session{}
	for rows.Next() {
		ss, moved, err := s.scanSession(rows)
		if err != nil {
			return nil, false, err
		}
		anyMoved = anyMoved || moved
		out = append(out, *ss)
	}
	return out, anyMoved, rows.Err()
}

// Rename sets a session's title and renames its folder with it: if the
// folder cannot be renamed nothing changes, and if the database update
// fails the folder is renamed back. The session returned is as the rename
// left it.
func (s *SQLite) Rename(ctx context.Context, id, title string, source TitleSource) (*Session, error) {
	ss, _, err := s.renameIf(ctx, id, title, source, nil)
	return ss, err
}

// renameIf is Rename, done only if cond (when not nil) accepts the current
// title and source; the check and the rename are one transaction, so a
// title set meanwhile by another process is never overridden by mistake.
func (s *SQLite) renameIf(ctx context.Context, id, title string, source TitleSource, cond func(title string, source TitleSource) bool) (*Session, bool, error) {
	title, err := validTitle(title)
	if err != nil {
		return nil, false, err
	}
	ss, changed, restore, err := s.renameTx(ctx, id, title, source, cond)
	if restore {
		// The folder went back, but its history.md may show the new title.
		if herr := s.writeHistory(context.WithoutCancel(ctx), id); herr != nil {
			err = fmt.Errorf("%w (and history.md could not be restored: %v)", err, herr)
		}
	}
	return ss, changed, err
}

func (s *SQLite) renameTx(ctx context.Context, id, title string, source TitleSource, cond func(string, TitleSource) bool) (ss *Session, changed, restore bool, err error) {
	tx, end, err := s.begin(ctx)
	if err != nil {
		return nil, false, false, err
	}
	defer end()
	var (
		folder, curTitle string
		curSource        TitleSource
		created          int64
	)
	if err := tx.QueryRowContext(ctx, "SELECT folder, created_at, title, title_source FROM sessions WHERE id = ?", id).Scan(&folder, &created, &curTitle, &curSource); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, false, notFound(id)
		}
		return nil, false, false, err
	}
	if cond != nil && !cond(curTitle, curSource) {
		return nil, false, false, nil
	}
	newFolder := folderName(fromMillis(created), title, id)
	if err := s.findFolder(ctx, tx, folder); err != nil {
		return nil, false, false, err
	}
	if newFolder != folder {
		if err := os.Rename(s.folderPath(folder), s.folderPath(newFolder)); err != nil {
			return nil, false, false, fmt.Errorf("renaming the session folder: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, "UPDATE sessions SET title = ?, title_source = ?, folder = ? WHERE id = ?", title, source, newFolder, id)
	if err == nil {
		err = s.touch(ctx, tx, id)
	}
	if err == nil {
		err = s.writeHistoryTx(ctx, tx, id)
	}
	if err == nil {
		ss, _, err = s.get(ctx, tx, id)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && newFolder != folder {
		// Put the folder back: the database still names the old one. The
		// write lock is still held, so nothing was written into it meanwhile.
		if rerr := os.Rename(s.folderPath(newFolder), s.folderPath(folder)); rerr != nil {
			return nil, false, false, fmt.Errorf("%w (and the folder could not be renamed back: %v)", err, rerr)
		}
		return nil, false, true, err
	}
	if err != nil {
		return nil, false, false, err
	}
	return ss, true, false, nil
}

// SetTitleIfAuto replaces an "auto" title with one the model suggested.
// It never overrides a user's or an earlier model title.
func (s *SQLite) SetTitleIfAuto(ctx context.Context, id, title string) (bool, error) {
	return s.setTitleIf(ctx, id, title, TitleModel, titleIsAuto)
}

// SetAutoTitle sets an "auto" title (from the first message) if the title
// is still the default one.
func (s *SQLite) SetAutoTitle(ctx context.Context, id, title string) (bool, error) {
	return s.setTitleIf(ctx, id, title, TitleAuto, titleIsDefault)
}

// The conditions of the titles the engine sets: the model's replaces only
// an automatic title, the first message's only the default one.
func titleIsAuto(_ string, src TitleSource) bool { return src == TitleAuto }

func titleIsDefault(cur string, src TitleSource) bool { return src == TitleAuto && cur == DefaultTitle }

// setTitleIf renames the session if cond accepts its title and source. A
// read answers the common "no" without the write lock; the rename checks
// cond again inside its transaction.
func (s *SQLite) setTitleIf(ctx context.Context, id, title string, source TitleSource, cond func(string, TitleSource) bool) (bool, error) {
	var cur string
	var src TitleSource
	if err := s.db.QueryRowContext(ctx, "SELECT title, title_source FROM sessions WHERE id = ?", id).Scan(&cur, &src); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return false, notFound(id)
		}
		return false, err
	}
	if !cond(cur, src) {
		return false, nil
	}
	_, changed, err := s.renameIf(ctx, id, title, source, cond)
	return changed, err
}

// Delete removes a session, its messages, context and folder.
func (s *SQLite) Delete(ctx context.Context, id string) error {
	var folder string
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT folder FROM sessions WHERE id = ?", id).Scan(&folder); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return notFound(id)
			}
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
		return err
	})
	if err != nil {
		return err
	}
	s.history.cache.forget(id)
	if err := os.RemoveAll(s.folderPath(folder)); err != nil {
		return fmt.Errorf("session deleted, but its folder could not be removed: %w", err)
	}
	return nil
}
