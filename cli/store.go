package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/service"
)

// storeCmd is "ctxls store": setting up the shared PostgreSQL store.
func storeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Set up the PostgreSQL session store (--store)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(storeInitCmd(g), storeCopyCmd(g))
	return cmd
}

// storeInitCmd is "ctxls store init".
func storeInitCmd(g *globals) *cobra.Command {
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create or update the PostgreSQL schema, the ctxls_user role and its policies (run as the database's owner)",
		Long: `init creates the tables of the PostgreSQL session store in the database --store
(or CTXLS_STORE) names, the role ctxls_user every person's role is a member of, and
the row-level security policies that keep private sessions private. Run it as the
database's owner, once and again after upgrading ctxls: it applies only the
migrations not yet applied. It prints the SQL that lets a person in.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn, err := g.resolveStore()
			if err != nil {
				return err
			}
			if dsn == "" {
				return usageError{errors.New("store init needs a PostgreSQL database: pass --store postgres://owner@host/database or set " + service.StoreEnv + " (the local SQLite store needs no set-up)")}
			}
			applied, err := service.InitStore(cmd.Context(), dsn) // its errors name the database without the password
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, name := range applied {
				fmt.Fprintf(w, "Applied %s\n", name)
			}
			if len(applied) == 0 {
				fmt.Fprintf(w, "The schema of %s is current: nothing to apply.\n", service.RedactDSN(dsn))
			} else {
				fmt.Fprintf(w, "The schema of %s is current.\n", service.RedactDSN(dsn))
			}
			printRoleSQL(w, databaseOf(dsn))
			return nil
		},
	}
	return initCmd
}

// storeCopyCmd is "ctxls store copy".
func storeCopyCmd(g *globals) *cobra.Command {
	var to string
	var asJSON bool
	copyCmd := &cobra.Command{
		Use:   "copy --to postgres://…",
		Short: "Copy the local store's sessions (messages, context, files) into a PostgreSQL store",
		Long: `copy copies every session of the local SQLite store in the data directory into the
PostgreSQL store --to names: messages with their times and statuses, the relevant
context with who added it, and the files of each session's folder. The copies belong
to the role --to logs in as, private until shared. Each session is copied whole or
not at all, and one the database has already is skipped: run it again after an
interruption, or to copy what is new.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !service.IsPostgresURL(to) {
				return usageError{errors.New("store copy needs --to postgres://user@host/database")}
			}
			dir, err := g.resolveDataDir()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			progress := func(id, title string, copied bool) {
				if asJSON {
					return
				}
				verb := "copied "
				if !copied {
					verb = "already there "
				}
				fmt.Fprintf(w, "%-14s%s  %s\n", verb, id, oneLine(title, 60))
			}
			rep, err := service.CopyStore(cmd.Context(), dir, to, progress)
			if asJSON && rep != nil {
				if jerr := writeJSON(w, rep); jerr != nil && err == nil {
					err = jerr
				}
			} else if rep != nil {
				fmt.Fprintf(w, "%d sessions copied (%d messages, %d files), %d already in %s.\n",
					len(rep.Copied), rep.Messages, rep.Files, len(rep.Skipped), service.RedactDSN(to))
			}
			return err
		},
	}
	copyCmd.Flags().StringVar(&to, "to", "", "the PostgreSQL store to copy into (postgres://user@host/database)")
	copyCmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return copyCmd
}

// printRoleSQL tells the database's owner how to let a person in.
func printRoleSQL(w io.Writer, db string) {
	fmt.Fprintf(w, "\nLet each person in with a role of their own (as the owner; leave out PASSWORD for peer or certificate authentication):\n")
	fmt.Fprintf(w, "  CREATE ROLE alice LOGIN PASSWORD 'change me' IN ROLE ctxls_user; GRANT CONNECT ON DATABASE %s TO alice;\n", quoteIdent(db))
	fmt.Fprintf(w, "Then they run ctxls with --store postgres://alice@HOST/%s (or %s set to it).\n", url.PathEscape(db), service.StoreEnv)
}

// databaseOf is the database a postgres:// URL names: its path, else its
// dbname parameter, else (as libpq) the user's name.
func databaseOf(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "DATABASE"
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		return db
	}
	if db := u.Query().Get("dbname"); db != "" {
		return db
	}
	if u.User != nil && u.User.Username() != "" {
		return u.User.Username()
	}
	return "DATABASE"
}

var plainIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]*$`) })

// quoteIdent quotes an SQL identifier unless it needs none.
func quoteIdent(s string) string {
	if plainIdent().MatchString(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// checkStore is doctor's store line: the store opens (for PostgreSQL,
// OpenStore connects and checks the schema and the role's membership of
// ctxls_user). Its error text says why not.
func checkStore(ctx context.Context, w io.Writer, g *globals) error {
	dir, err := g.resolveDataDir()
	if err != nil {
		fmt.Fprintf(w, "✗ store: %v\n", err)
		return errors.New("the session store cannot be opened")
	}
	dsn, err := g.resolveStore()
	if err != nil {
		fmt.Fprintf(w, "✗ store: %v\n", err)
		return errors.New("the session store cannot be opened")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := service.CheckStore(ctx, dir, dsn); err != nil {
		fmt.Fprintf(w, "✗ store: %v\n", err)
		return errors.New("the session store cannot be opened")
	}
	if dsn == "" {
		fmt.Fprintf(w, "✓ store: SQLite %s\n", filepath.Join(dir, "ctxls.db"))
	} else {
		fmt.Fprintf(w, "✓ store: PostgreSQL %s (schema current, a member of ctxls_user; local mirror in %s)\n", service.RedactDSN(dsn), dir)
	}
	return nil
}
