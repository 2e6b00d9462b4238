// Package postgres is the session store for teams: sessions, messages and
// context in a PostgreSQL database (through pgx), shared by everyone whose
// role may connect, with each session's folder mirrored into the local
// data directory. It implements session.Store. Row-Level Security decides
// who sees which session; LISTEN/NOTIFY tells the other daemons of every
// change (see Store and live.go); a turn holds an advisory lock on its
// session across daemons. See migrations/ for the schema and
// docs/architecture.md for setting it up.
package postgres
