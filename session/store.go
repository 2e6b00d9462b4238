package session

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var (
	// ErrNotFound: an unknown session, message or file.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: an argument that breaks a rule; the message says which.
	ErrInvalid = errors.New("invalid argument")
	// ErrTooLarge: a file over MaxFileSize.
	ErrTooLarge = errors.New("too large")
)

// MaxFileSize is the largest file a session accepts (25 MB).
const MaxFileSize = 25 << 20

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the session store of one data directory. It is safe for
// concurrent use, and several processes may open the same directory.
type Store struct {
	db  *sql.DB
	dir string
	now func() time.Time

	// folders is held for writing while a session folder is renamed and
	// for reading while files are written inside one, so a write never
	// lands in a folder that is being moved (within this process).
	folders sync.RWMutex
}

// Open opens (creating if needed) the store in dataDir.
func Open(dataDir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dataDir, "sessions"), 0o700); err != nil {
		return nil, err
	}
	dbPath := filepath.Join(dataDir, "ctxls.db")
	// Create the file 0600 ourselves: SQLite gives its -wal and -shm files
	// the database file's permissions.
	if f, err := os.OpenFile(dbPath, os.O_CREATE|os.O_RDWR, 0o600); err != nil {
		return nil, err
	} else {
		f.Close()
	}
	dsn := "file:" + dbPath +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	s := &Store{db: db, dir: dataDir, now: time.Now}
	// Switching a new database to WAL takes an exclusive lock for which
	// SQLite does not always call the busy handler, so two processes that
	// create the store at the same moment can see SQLITE_BUSY here: retry.
	err = s.migrate()
	for wait := 10 * time.Millisecond; err != nil && isBusy(err) && wait < 5*time.Second; wait *= 2 {
		time.Sleep(wait)
		err = s.migrate()
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating %s: %w", dbPath, err)
	}
	return s, nil
}

// migrate applies the embedded migrations newer than PRAGMA user_version,
// in one immediate transaction, so two processes starting at once apply
// them once.
func (s *Store) migrate() error {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(files)
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > len(files) {
		return fmt.Errorf("the database is at schema version %d but this ctxls knows only %d: upgrade ctxls", version, len(files))
	}
	for i := version; i < len(files); i++ {
		sqlText, err := migrations.ReadFile(files[i])
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(sqlText)); err != nil {
			return fmt.Errorf("%s: %w", files[i], err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(files))); err != nil {
		return err
	}
	return tx.Commit()
}

func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// DataDir is the store's directory.
func (s *Store) DataDir() string { return s.dir }

func (s *Store) millis() int64 { return s.now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// inTx runs fn in an immediate write transaction.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// touch bumps a session's updatedAt inside tx, reporting ErrNotFound.
func (s *Store) touch(ctx context.Context, tx *sql.Tx, id string) error {
	res, err := tx.ExecContext(ctx, "UPDATE sessions SET updated_at = max(updated_at + 1, ?) WHERE id = ?", s.millis(), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(id)
	}
	return nil
}

func notFound(id string) error {
	return fmt.Errorf("session %q: %w", truncate(id, 80), ErrNotFound)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// writeFileAtomic writes data to path through a temporary file and rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
