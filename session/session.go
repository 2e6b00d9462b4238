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
	EnvHint        string     `json:"envHint,omitempty"`
	CurrentIntent  string     `json:"currentIntent,omitempty"`
	LastObservedAt *time.Time `json:"lastObservedAt,omitempty"`
	LastIdleAt     *time.Time `json:"lastIdleAt,omitempty"`
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
	FileCount    int         `json:"fileCount"`    // files in sources/, hidden ones excluded
}

// ListOptions select a page of sessions.
type ListOptions struct {
	Query  string // case-insensitive substring of the title
	Limit  int    // default 50, at most 500
	Cursor string // nextCursor of the previous page
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

// slug makes a folder-friendly form of a title.
func slug(title string) string {
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
	return created.UTC().Format("2006-01-02T15-04-05") + "--" + slug(title) + "--" + id[:6]
}

var subdirs = []string{"sources", "results", "scripts", "data"}

func (s *Store) folderPath(name string) string { return filepath.Join(s.dir, "sessions", name) }

// Create makes a session with its folder. An empty title gives
// DefaultTitle with source "auto"; a title given is the user's.
func (s *Store) Create(ctx context.Context, title string) (*Session, error) {
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
	for _, d := range subdirs {
		if err := os.MkdirAll(filepath.Join(path, d), 0o700); err != nil {
			os.RemoveAll(path)
			return nil, err
		}
	}
	if _, err := s.db.ExecContext(ctx,
		"INSERT INTO sessions (id, title, title_source, created_at, updated_at, folder) VALUES (?, ?, ?, ?, ?, ?)",
		id, title, source, now, now, folder); err != nil {
		os.RemoveAll(path)
		return nil, err
	}
	if err := s.writeHistory(ctx, id); err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

const sessionColumns = `s.id, s.title, s.title_source, s.created_at, s.updated_at, s.meta, s.folder,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id)`

func (s *Store) scanSession(row interface{ Scan(...any) error }) (*Session, error) {
	var (
		ss               Session
		created, updated int64
		meta             string
		folder           string
	)
	if err := row.Scan(&ss.ID, &ss.Title, &ss.TitleSource, &created, &updated, &meta, &folder, &ss.MessageCount); err != nil {
		return nil, err
	}
	ss.CreatedAt, ss.UpdatedAt = fromMillis(created), fromMillis(updated)
	_ = json.Unmarshal([]byte(meta), &ss.Meta)
	ss.Folder = s.folderPath(folder)
	ss.FileCount = countFiles(filepath.Join(ss.Folder, "sources"))
	return &ss, nil
}

func countFiles(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// Get returns one session.
func (s *Store) Get(ctx context.Context, id string) (*Session, error) {
	ss, err := s.scanSession(s.db.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(id)
	}
	return ss, err
}

type cursor struct {
	U  int64  `json:"u"`
	ID string `json:"i"`
}

// List returns sessions, most recent activity first, and a cursor for the
// next page ("" at the end).
func (s *Store) List(ctx context.Context, opt ListOptions) ([]Session, string, error) {
	limit := opt.Limit
	switch {
	case limit < 0:
		return nil, "", invalid("limit must not be negative")
	case limit == 0:
		limit = 50
	case limit > 500:
		limit = 500
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
	args = append(args, limit+1)
	rows, err := s.db.QueryContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE "+strings.Join(where, " AND ")+
		" ORDER BY s.updated_at DESC, s.id DESC LIMIT ?", args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		ss, err := s.scanSession(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, *ss)
	}
	if err := rows.Err(); err != nil {
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

// Rename sets a session's title and renames its folder with it: if the
// folder cannot be renamed nothing changes, and if the database update
// fails the folder is renamed back.
func (s *Store) Rename(ctx context.Context, id, title string, source TitleSource) (*Session, error) {
	title, err := validTitle(title)
	if err != nil {
		return nil, err
	}
	if err := s.renameTx(ctx, id, title, source); err != nil {
		return nil, err
	}
	if err := s.writeHistory(ctx, id); err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

func (s *Store) renameTx(ctx context.Context, id, title string, source TitleSource) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var folder string
	var created int64
	if err := tx.QueryRowContext(ctx, "SELECT folder, created_at FROM sessions WHERE id = ?", id).Scan(&folder, &created); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(id)
		}
		return err
	}
	newFolder := folderName(fromMillis(created), title, id)
	s.folders.Lock()
	defer s.folders.Unlock()
	if newFolder != folder {
		if err := os.Rename(s.folderPath(folder), s.folderPath(newFolder)); err != nil {
			return fmt.Errorf("renaming the session folder: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, "UPDATE sessions SET title = ?, title_source = ?, folder = ? WHERE id = ?", title, source, newFolder, id)
	if err == nil {
		err = s.touch(ctx, tx, id)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && newFolder != folder {
		// Put the folder back: the database still names the old one.
		if rerr := os.Rename(s.folderPath(newFolder), s.folderPath(folder)); rerr != nil {
			err = fmt.Errorf("%w (and the folder could not be renamed back: %v)", err, rerr)
		}
	}
	return err
}

// SetTitleIfAuto replaces an "auto" title with one the model suggested.
// It never overrides a user's or an earlier model title.
func (s *Store) SetTitleIfAuto(ctx context.Context, id, title string) (bool, error) {
	var src TitleSource
	if err := s.db.QueryRowContext(ctx, "SELECT title_source FROM sessions WHERE id = ?", id).Scan(&src); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return false, notFound(id)
		}
		return false, err
	}
	if src != TitleAuto {
		return false, nil
	}
	if _, err := s.Rename(ctx, id, title, TitleModel); err != nil {
		return false, err
	}
	return true, nil
}

// SetAutoTitle sets an "auto" title (from the first message) if the title
// is still the default one.
func (s *Store) SetAutoTitle(ctx context.Context, id, title string) (bool, error) {
	var cur string
	var src TitleSource
	if err := s.db.QueryRowContext(ctx, "SELECT title, title_source FROM sessions WHERE id = ?", id).Scan(&cur, &src); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return false, notFound(id)
		}
		return false, err
	}
	if src != TitleAuto || cur != DefaultTitle {
		return false, nil
	}
	if _, err := s.Rename(ctx, id, title, TitleAuto); err != nil {
		return false, err
	}
	return true, nil
}

// Delete removes a session, its messages, context and folder.
func (s *Store) Delete(ctx context.Context, id string) error {
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
	if err := os.RemoveAll(s.folderPath(folder)); err != nil {
		return fmt.Errorf("session deleted, but its folder could not be removed: %w", err)
	}
	return nil
}

// UpdateMeta replaces a session's meta.
func (s *Store) UpdateMeta(ctx context.Context, id string, m Meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE sessions SET meta = ? WHERE id = ?", string(b), id); err != nil {
			return err
		}
		return s.touch(ctx, tx, id)
	})
}
