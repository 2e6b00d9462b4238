package sqlite

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

	"github.com/ctxls/ctxls/session"
	"modernc.org/sqlite" // also registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// SQLite is the session store of one data directory (the embedded default
// Store). It is safe for concurrent use, and several processes may open the
// same directory.
//
// Session folders are renamed with their titles, so a write inside a
// folder (a file, history.md, an export) must not race a rename, in this
// process or another. Both run inside an immediate write transaction (see
// inFolder): SQLite lets one such transaction run at a time across every
// process of the data directory, so the folder the transaction reads from
// the database is where it is on disk until the transaction ends. Readers
// take no lock; one that finds a folder missing (moved by a rename that
// has not committed yet) reads again inside a write transaction.
type Store struct {
	db  *sql.DB
	dir string
	now func() time.Time

	writer  *session.WriteLock
	history session.HistoryWriter

	// owner names this store instance in the answers it streams
	// ("<host>/<pid>/<random>"), so another process can tell a live
	// daemon's answer from one a killed daemon left "streaming".
	owner string

	// touched is each session's updated_at as this store last set it
	// (touch), so Watch tells its own changes from other processes'.
	touchedMu sync.Mutex
	touched   map[string]int64
	// watchEvery is how often Watch looks for other processes' changes
	// (0: DefaultWatchEvery).
	watchEvery time.Duration
}

// Open opens (creating if needed) the store in dataDir.
func Open(dataDir string) (*Store, error) {
	for _, d := range []string{"sessions", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dataDir, d), 0o700); err != nil {
			return nil, err
		}
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
	db := sql.OpenDB(keptConnector{drv: &sqlite.Driver{}, dsn: dsn})
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	lock, err := session.OpenWriteLock(filepath.Join(dataDir, "ctxls.lock"))
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &Store{db: db, dir: dataDir, now: time.Now, writer: lock, owner: session.NewOwner()}
	s.history.Write = s.writeHistory
	// Switching a new database to WAL takes an exclusive lock for which
	// SQLite does not always call the busy handler, so two processes that
	// create the store at the same moment can see SQLITE_BUSY here: retry.
	err = s.migrate()
	for wait := 10 * time.Millisecond; err != nil && isBusy(err) && wait < 5*time.Second; wait *= 2 {
		time.Sleep(wait)
		err = s.migrate()
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("migrating %s: %w", dbPath, err)
	}
	if err := s.recoverFolders(context.Background()); err != nil {
		s.Close()
		return nil, fmt.Errorf("repairing the session folders in %s: %w", dataDir, err)
	}
	if err := s.interruptStale(context.Background(), ""); err != nil {
		s.Close()
		return nil, fmt.Errorf("marking answers left streaming as interrupted in %s: %w", dbPath, err)
	}
	return s, nil
}

// migrate applies the embedded migrations newer than PRAGMA user_version,
// in one immediate transaction, so two processes starting at once apply
// them once. A database already at the newest version (every start but the
// first after an upgrade) is only read: a write transaction, even one that
// changes nothing, makes SQLite restart the write-ahead log and wait for the
// disk (fsync), which was most of the store's opening time.
func (s *Store) migrate() error {
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(files)
	ctx := context.Background()
	var current int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
		return err
	}
	if current == len(files) {
		return nil
	}
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
func (s *Store) Close() error {
	herr := s.history.Close()
	s.writer.Close()
	return errors.Join(herr, s.db.Close())
}

// DataDir is the store's directory.
func (s *Store) DataDir() string { return s.dir }

func (s *Store) millis() int64 { return s.now().UnixMilli() }

// begin starts an immediate write transaction; end must be called with it
// when the transaction is over (committed or not).
func (s *Store) begin(ctx context.Context) (tx *sql.Tx, end func(), err error) {
	if err := s.writer.Acquire(ctx); err != nil {
		return nil, nil, err
	}
	tx, err = s.db.BeginTx(ctx, nil)
	if err != nil {
		s.writer.Release()
		return nil, nil, err
	}
	return tx, func() { tx.Rollback(); s.writer.Release() }, nil
}

// inTx runs fn in an immediate write transaction.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, end, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// exec runs one writing statement in a write transaction (an autocommit
// write would wait for SQLite's lock outside the writeLock queue).
func (s *Store) exec(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// inFolder runs fn in an immediate write transaction with the absolute
// path of the session's folder as the transaction sees it. Everything that
// writes inside a session folder goes through here: no rename can move the
// folder until the transaction ends, in any process.
func (s *Store) inFolder(ctx context.Context, id string, fn func(tx *sql.Tx, folder string) error) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var folder string
		if err := tx.QueryRowContext(ctx, "SELECT folder FROM sessions WHERE id = ?", id).Scan(&folder); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return session.NotFound(id)
			}
			return err
		}
		if err := s.findFolder(ctx, tx, folder); err != nil {
			return err
		}
		return fn(tx, s.folderPath(folder))
	})
}

// touch bumps a session's updatedAt inside tx, reporting ErrNotFound. The
// new value is noted as this store's own (see Watch).
func (s *Store) touch(ctx context.Context, tx *sql.Tx, id string) error {
	var at int64
	err := tx.QueryRowContext(ctx, "UPDATE sessions SET updated_at = max(updated_at + 1, ?) WHERE id = ? RETURNING updated_at", s.millis(), id).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return session.NotFound(id)
	}
	if err != nil {
		return err
	}
	s.touchedMu.Lock()
	if s.touched == nil {
		s.touched = map[string]int64{}
	}
	s.touched[id] = at
	s.touchedMu.Unlock()
	return nil
}

// forget drops what the store keeps in memory about a session it deleted:
// its history.md rendering and the updated_at it last set.
func (s *Store) forget(id string) {
	s.history.Cache.Forget(id)
	s.touchedMu.Lock()
	delete(s.touched, id)
	s.touchedMu.Unlock()
}

var _ session.Store = (*Store)(nil)
