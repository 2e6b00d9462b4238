package service

import (
	"context"
	"os"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// The store's administration, below the CLI's "store" and "sessions du"
// commands: what opens no connection's service, or needs the store whole.

// StoreEnv is the variable that names the session store (a PostgreSQL URL).
const StoreEnv = backend.StoreEnv

// IsPostgresURL reports whether s names a PostgreSQL store; RedactDSN is
// a store's URL without its password, as every message names it.
func IsPostgresURL(s string) bool { return backend.IsPostgresURL(s) }
func RedactDSN(dsn string) string { return backend.RedactDSN(dsn) }

// InitStore creates or updates the PostgreSQL store's schema, its role and
// policies (run as the database's owner); it returns the migrations it
// applied. Its errors name the database without the password.
func InitStore(ctx context.Context, dsn string) ([]string, error) {
	return backend.InitPostgres(ctx, dsn)
}

// CheckStore opens the store dsn names (else SQLite in dataDir) and closes
// it again: whether ctxls can use it (the schema current, the role a
// member of ctxls_user).
func CheckStore(ctx context.Context, dataDir, dsn string) error {
	st, err := backend.Open(ctx, dataDir, dsn)
	if err != nil {
		return openError(Config{DataDir: dataDir, Store: dsn}, err)
	}
	return st.Close()
}

// CopyReport is what a copy into PostgreSQL did.
type CopyReport = backend.CopyReport

// CopyStore copies every session of the SQLite store in dataDir into the
// PostgreSQL store at to, each whole or not at all, skipping the ones it
// has; progress is told of each (copied false: already there).
func CopyStore(ctx context.Context, dataDir, to string, progress func(id, title string, copied bool)) (*CopyReport, error) {
	local, err := backend.Open(ctx, dataDir, "")
	if err != nil {
		return nil, openError(Config{DataDir: dataDir}, err)
	}
	defer local.Close()
	// The copy reads nothing back: its mirror is a scratch folder.
	scratch, err := os.MkdirTemp("", "ctxls-copy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	pg, err := backend.Open(ctx, scratch, to)
	if err != nil {
		return nil, openError(Config{DataDir: dataDir, Store: to}, err)
	}
	defer pg.Close()
	return backend.CopyToPostgres(ctx, local, pg, func(ss session.Session, copied bool) { progress(ss.ID, ss.Title, copied) })
}

// DiskUsage measures the data directory (the CLI's "sessions du").
func (s *Service) DiskUsage(ctx context.Context) (*api.DiskUsage, error) {
	return s.store.DiskUsage(ctx)
}
