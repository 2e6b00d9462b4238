package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var pgMigrations embed.FS

// Init creates or updates the PostgreSQL store's schema in the
// database dsn names: the tables, the ctxls_user role its users are members
// of, and the policies that keep private sessions private. It runs the
// migrations not yet applied, each in a transaction, under an advisory lock
// so that two runs at once do not both apply one. It must run as a role
// that may create roles and tables (the database's owner); `ctxls store
// init` runs it.
func Init(ctx context.Context, dsn string) (applied []string, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", RedactDSN(dsn), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	names, err := fs.Glob(pgMigrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// One initialiser at a time; the lock ends with the transaction.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('ctxls schema'))"); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS ctxls_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return nil, err
	}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		var done bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM ctxls_migrations WHERE name = $1)", base).Scan(&done); err != nil {
			return nil, err
		}
		if done {
			continue
		}
		sql, err := pgMigrations.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, string(sql)); err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO ctxls_migrations (name) VALUES ($1)", base); err != nil {
			return nil, err
		}
		applied = append(applied, base)
	}
	return applied, tx.Commit(ctx)
}

// pgSchemaVersion is the number of migrations this ctxls knows.
func pgSchemaVersion() int {
	names, _ := fs.Glob(pgMigrations, "migrations/*.sql")
	return len(names)
}

// RedactDSN names a database for people without its password:
// "user@host/database".
func RedactDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "the database"
	}
	return fmt.Sprintf("%s@%s/%s", cfg.User, cfg.Host, cfg.Database)
}
