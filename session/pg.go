package session

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the PostgreSQL session store (--store postgres://…): the
// database holds sessions, messages, context and session files; the data
// directory holds each machine's mirror of the session folders.
type Postgres struct {
	pool  *pgxpool.Pool
	dir   string
	now   func() time.Time
	owner string
}

var _ Store = (*Postgres)(nil)

// OpenPostgres opens the PostgreSQL store dsn names, with dataDir for the
// local mirror of the session folders.
func OpenPostgres(ctx context.Context, dataDir, dsn string) (*Postgres, error) {
	return nil, errPGTodo
}

// StoreEnv names the environment variable that selects the store when
// --store is not given.
const StoreEnv = "CTXLS_STORE"

// OpenStore opens the store every door uses: the PostgreSQL database url
// names (postgres://… or postgresql://…), with dataDir for the local
// mirror of session folders, or, with url "", the SQLite store in dataDir.
func OpenStore(ctx context.Context, dataDir, url string) (Store, error) {
	switch {
	case url == "":
		if s, err := Open(dataDir); err == nil {
			return s, nil
		} else {
			return nil, err
		}
	case IsPostgresURL(url):
		if s, err := OpenPostgres(ctx, dataDir, url); err == nil {
			return s, nil
		} else {
			return nil, err
		}
	}
	return nil, invalid("store %q is not a PostgreSQL URL (postgres://…); leave it out for the local store", truncate(url, 60))
}
