// Package sqlite is the embedded session store, and the default: one
// SQLite database (sessions.db, pure Go: modernc.org/sqlite) and the
// session folders beside it in a data directory, which several daemons
// and the CLI may share at once. It implements session.Store; see Store
// for how folder renames and writes into folders are kept apart across
// processes, and migrations/ for the schema.
package sqlite
