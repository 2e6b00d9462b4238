// Package session is what every session store shares: the types (Session,
// Message, Context, Hit, ...), the errors (ErrNotFound, ErrInvalid,
// ErrTooLarge, ...), the rules both backends follow (title, name and
// context-set checks and limits, output paths, the Markdown of history.md
// and exports, stale streaming answers, the data directory's write lock)
// and the Store interface, composed of one interface per concern
// (backend.go).
//
// The backends are packages of their own: session/sqlite (the default: one
// SQLite database in the data directory, WAL, immediate write
// transactions, several ctxls processes sharing it safely) and
// session/postgres (a database shared by machines and teams, with a local
// mirror of the session folders). session/backend opens the one a store URL
// names; session/storetest is the conformance suite both pass.
//
// Layout of a data directory:
//
//	ctxls.db                                  the SQLite database (0600)
//	ctxls.lock                                the write lock (WriteLock)
//	sessions/<YYYY-MM-DDTHH-MM-SS>--<slug>--<id6>/
//	    sources/  results/  scripts/  data/   the user's files and the model's outputs
//	    history.md                            the conversation, rewritten on every change
//
// Errors a person can act on wrap ErrNotFound, ErrInvalid or ErrTooLarge.
package session
