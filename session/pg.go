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
