// Package backend is the one place where a store URL chooses the session
// store: nothing for the SQLite store in the data directory
// (session/sqlite), postgres:// or postgresql:// for a PostgreSQL database
// (session/postgres). A third backend is a package implementing
// session.Store plus one case in Open. The doors (lsp, acp, cli) open
// stores, set them up and copy between them only through this package.
package backend

import (
	"context"
	"strings"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/postgres"
	"github.com/ctxls/ctxls/session/sqlite"
)

// StoreEnv names the environment variable that selects the store when
// --store is not given.
const StoreEnv = "CTXLS_STORE"

// Open opens the store every door uses: the PostgreSQL database url names
// (postgres://… or postgresql://…), with dataDir for the local mirror of
// session folders, or, with url "", the SQLite store in dataDir.
func Open(ctx context.Context, dataDir, url string) (session.Store, error) {
	switch {
	case url == "":
		return nilIfErr(sqlite.Open(dataDir))
	case IsPostgresURL(url):
		return nilIfErr(postgres.Open(ctx, dataDir, url))
	}
	// Not echoed: it may hold a password.
	return nil, session.Invalidf("the store must be a PostgreSQL URL (postgres://… or postgresql://…); leave it out for the local store")
}

// nilIfErr returns a store as a session.Store, or a nil interface (never a
// nil pointer in one) with the error.
func nilIfErr[S session.Store](s S, err error) (session.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// IsPostgresURL reports whether a --store value names a PostgreSQL database.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// RedactDSN names a database for people without its password:
// "user@host/database".
func RedactDSN(dsn string) string { return postgres.RedactDSN(dsn) }

// InitPostgres creates or updates the PostgreSQL store's schema in the
// database dsn names (`ctxls store init`; see postgres.Init).
func InitPostgres(ctx context.Context, dsn string) (applied []string, err error) {
	return postgres.Init(ctx, dsn)
}

// CopyReport is what CopyToPostgres did.
type CopyReport = postgres.CopyReport

// CopyToPostgres copies every session of the local store src (opened by
// Open with no URL) into the PostgreSQL store dst (opened by Open with its
// URL), as `ctxls store copy` does; see postgres.Copy.
func CopyToPostgres(ctx context.Context, src, dst session.Store, progress func(session.Session, bool)) (*CopyReport, error) {
	from, ok := src.(postgres.Source)
	if !ok {
		return nil, session.Invalidf("only the local SQLite store can be copied, not %T", src)
	}
	to, ok := dst.(*postgres.Store)
	if !ok {
		return nil, session.Invalidf("copies go into a PostgreSQL store, not %T", dst)
	}
	return postgres.Copy(ctx, from, to, progress)
}

// IsUnavailable reports whether err, from a store call, says the store's
// database could not be reached (see postgres.IsUnavailable); the SQLite
// store's errors never say so.
func IsUnavailable(err error) bool { return postgres.IsUnavailable(err) }
