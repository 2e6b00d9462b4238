package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the PostgreSQL session store (--store postgres://…), for
// sessions that follow a person across machines and may be shared with a
// team. The database holds sessions, messages, context and the session
// files; the data directory holds this machine's mirror of the session
// folders (files, history.md and exports, so the model's read_file and
// people browsing folders see them), its lock file and the logs.
//
// Who sees what is the database's business: every session has an owner
// (the role that made it) and a visibility, and Row-Level Security policies
// (migrations/0001_init.sql) keep a role from another's private sessions
// whatever SQL it sends. The store connects as the person's own role and
// needs no check of its own.
//
// Times are this process's clock, as in the SQLite store, so a session's
// updatedAt is comparable across both and tests may set the clock.
type Store struct {
	pool  *pgxpool.Pool
	dir   string
	now   func() time.Time
	owner string // "<host>/<pid>/<random>", as sqlite.Store.owner
	// app is the application_name of this store's connections, which
	// the change notifications carry, so Watch skips its own.
	app string
	// turnConns holds the connections of turn locks (LockTurn), apart
	// from the pool the store's work uses.
	turnConns *pgxpool.Pool
	turnMu    sync.Mutex
	turns     map[*pgxpool.Conn]*heldTurn // held turn locks, let go of by Close

	// local is the data directory's write lock: the mirror folders are
	// changed by one process of this machine at a time.
	local   *session.WriteLock
	history session.HistoryWriter
}

var _ session.Store = (*Store)(nil)

// Open opens the PostgreSQL store dsn names, with dataDir for the
// local mirror of the session folders. The schema must have been made by
// Init (`ctxls store init`), and the role dsn logs in as must be a
// member of ctxls_user.
func Open(ctx context.Context, dataDir, dsn string) (*Store, error) {
	for _, d := range []string{"sessions", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dataDir, d), 0o700); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, session.Invalidf("the store URL is not a PostgreSQL connection string: %v", err)
	}
	app := "ctxls/" + session.NewID()[:12]
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	cfg.MaxConns = 8
	cfg.MaxConnIdleTime = time.Minute
	// A connection idle through a PostgreSQL restart is dead: check one
	// that sat unused before using it (a round trip on a Unix socket is
	// some tens of microseconds; busy connections are not checked).
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool { return p.IdleDuration > 100*time.Millisecond }
	name := RedactDSN(dsn)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", name, err)
	}
	if err := checkSchema(ctx, pool, name); err != nil {
		pool.Close()
		return nil, err
	}
	tcfg := cfg.Copy()
	tcfg.MaxConns = 64
	turnConns, err := pgxpool.NewWithConfig(ctx, tcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("cannot connect to %s: %w", name, err)
	}
	lock, err := session.OpenWriteLock(filepath.Join(dataDir, "ctxls.lock"))
	if err != nil {
		pool.Close()
		turnConns.Close()
		return nil, err
	}
	s := &Store{pool: pool, turnConns: turnConns, dir: dataDir, now: time.Now, owner: session.NewOwner(), app: app, turns: map[*pgxpool.Conn]*heldTurn{},
		local: lock}
	s.history.Write = s.writeHistory
	if err := session.RemoveStaleTmp(filepath.Join(dataDir, "tmp"), s.now()); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.sweepMirror(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("clearing this machine's folders of deleted sessions in %s: %w", dataDir, err)
	}
	if err := s.interruptStale(ctx, ""); err != nil {
		s.Close()
		return nil, fmt.Errorf("marking answers left streaming as interrupted in %s: %w", name, err)
	}
	return s, nil
}

// checkSchema checks that the database has this ctxls's schema and that
// the role may use it, saying what to do when not.
func checkSchema(ctx context.Context, pool *pgxpool.Pool, name string) error {
	var made bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('public.ctxls_migrations') IS NOT NULL").Scan(&made); err != nil {
		return fmt.Errorf("cannot use the database %s: %w", name, err)
	}
	if !made {
		return fmt.Errorf("the database %s has no ctxls schema: its owner runs `ctxls store init --store URL` once", name)
	}
	var role string
	var member bool
	if err := pool.QueryRow(ctx, "SELECT session_user::text, pg_has_role(session_user, 'ctxls_user', 'MEMBER')").Scan(&role, &member); err != nil {
		return fmt.Errorf("cannot use the database %s: %w", name, err)
	}
	if !member {
		return fmt.Errorf("the role %s is not a member of ctxls_user in %s: an administrator runs GRANT ctxls_user TO %s", role, name, sqlIdent(role))
	}
	var applied int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM ctxls_migrations").Scan(&applied); err != nil {
		return fmt.Errorf("cannot use the database %s: %w", name, err)
	}
	switch {
	case applied < pgSchemaVersion():
		return fmt.Errorf("the database %s has an older ctxls schema (%d of %d migrations): its owner runs `ctxls store init --store URL` to update it", name, applied, pgSchemaVersion())
	case applied > pgSchemaVersion():
		return fmt.Errorf("the database %s has a newer ctxls schema (%d migrations; this ctxls knows %d): upgrade ctxls", name, applied, pgSchemaVersion())
	}
	return nil
}

// sqlIdent writes a role's name as SQL takes it: as it is when it needs
// no quotes, else quoted.
func sqlIdent(name string) string {
	if name != "" && !strings.ContainsFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') }) &&
		!(name[0] >= '0' && name[0] <= '9') {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}

// Close writes pending history.md files and closes the connections.
func (s *Store) Close() error {
	err := s.history.Close()
	s.pool.Close()
	// Turns still held end with their connections, as at a daemon's exit.
	s.turnMu.Lock()
	for c, h := range s.turns {
		h.mu.Lock()
		h.released = true
		c.Conn().Close(context.Background())
		c.Release()
		h.mu.Unlock()
	}
	clear(s.turns)
	s.turnMu.Unlock()
	s.turnConns.Close()
	s.local.Close()
	return err
}

// DataDir is the directory of the local mirror, locks and logs.
func (s *Store) DataDir() string { return s.dir }

func (s *Store) millis() int64 { return s.now().UnixMilli() }

func (s *Store) folderPath(name string) string { return filepath.Join(s.dir, "sessions", name) }

// pgQuerier is a pool or a transaction.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// touch bumps a session's updatedAt, reporting ErrNotFound for a session
// the role cannot see.
func (s *Store) touch(ctx context.Context, q pgQuerier, id string) error {
	tag, err := q.Exec(ctx, "UPDATE sessions SET updated_at = GREATEST(updated_at + 1, $1) WHERE id = $2", s.millis(), id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return session.NotFound(id)
	}
	return nil
}

// exists reports ErrNotFound for a session the role cannot see.
func (s *Store) exists(ctx context.Context, q pgQuerier, id string) error {
	var ok bool
	if err := q.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1)", id).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return session.NotFound(id)
	}
	return nil
}

// withLocal runs fn holding the data directory's write lock.
func (s *Store) withLocal(ctx context.Context, fn func() error) error {
	if err := s.local.Acquire(ctx); err != nil {
		return err
	}
	defer s.local.Release()
	return fn()
}
