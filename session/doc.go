// Package session is ctxls's persistent state: sessions, their messages,
// named relevant-context sets, full-text search and the per-session folders,
// in one SQLite database (WAL, immediate write transactions) that several
// ctxls processes share safely.
//
// Layout of a data directory:
//
//	ctxls.db                                  the database (0600)
//	sessions/<YYYY-MM-DDTHH-MM-SS>--<slug>--<id6>/
//	    sources/  results/  scripts/  data/   the user's files and the model's outputs
//	    history.md                            the conversation, rewritten on every change
//
// Errors a person can act on wrap ErrNotFound, ErrInvalid or ErrTooLarge.
package session
