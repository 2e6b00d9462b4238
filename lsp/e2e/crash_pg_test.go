package e2e_test

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/session/backend"
)

var crashPGKills = flag.Int("crash.pgkills", 25, "TestCrashRandomKillsPostgres: how many times the daemon is killed")

// TestCrashRandomKillsPostgres is TestCrashRandomKills on the PostgreSQL
// store (--store): the same editor work, kills and checks, with the
// database read over SQL instead of the SQLite file. The database server
// lives on; what a kill leaves is the killed daemon's connections
// (rolled back, its turn locks let go of) and its half-done work in the
// mirror folders. Where the SQLite store's checks are about its own
// folders, the mirror gets its own (pgCrashDB.checkFolders). 25 kills by
// default (-crash.pgkills), about 35 s.
func TestCrashRandomKillsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the daemon 25 times")
	}
	parallel(t, timingTests)
	c := pgtest.Start(t)
	dsn := c.DSN("", "postgres")
	ctx := context.Background()
	if _, err := backend.InitPostgres(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS amcheck"); err != nil {
		t.Fatal(err)
	}
	db := &pgCrashDB{pool: pool, dsn: dsn, dbHash: map[string][32]byte{}, diskHash: map[string][32]byte{}}
	runCrashKills(t, t.TempDir(), db, *crashPGKills)
}

// pgCrashDB is the PostgreSQL store, read as its superuser (which the
// daemons connect as too, so Row-Level Security hides nothing).
type pgCrashDB struct {
	pool *pgxpool.Pool
	dsn  string
	// dbHash caches the SHA-256 of a file in the database by
	// "session/name/updated_at"; diskHash one in the mirror by
	// "path/size/mtime".
	dbHash   map[string][32]byte
	diskHash map[string][32]byte
}

func (db *pgCrashDB) flags() []string { return []string{"--store", db.dsn} }

func (db *pgCrashDB) emptySessions(*crashRun) ([]string, error) {
	rows, err := db.query("SELECT s.id FROM sessions s WHERE " + emptySessionRow + " AND NOT EXISTS (SELECT 1 FROM files f WHERE f.session_id = s.id)")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range rows {
		out = append(out, str(row, "id"))
	}
	return out, nil
}

func (db *pgCrashDB) queries(qs ...string) ([][]map[string]any, error) {
	out := make([][]map[string]any, len(qs))
	for i, q := range qs {
		rows, err := db.query(q)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", q, err)
		}
		out[i] = rows
	}
	return out, nil
}

func (db *pgCrashDB) query(q string) ([]map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := db.pool.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fields := rows.FieldDescriptions()
	var out []map[string]any
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		row := map[string]any{}
		for i, f := range fields {
			switch v := vals[i].(type) {
			case int64:
				row[f.Name] = float64(v)
			case int32:
				row[f.Name] = float64(v)
			case []byte:
				row[f.Name] = string(v)
			default:
				row[f.Name] = v
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// integrity checks the database after a kill. The server was not killed,
// so this is about what the daemon's transactions left: amcheck's heap
// check of every table and B-tree check of every index (each row indexed,
// each entry pointing at a row); both full-text indexes (GIN, which
// amcheck checks only from PostgreSQL 18) answering as a scan of their
// table does; and each context set's positions being 0…n-1. Foreign keys
// are PostgreSQL's to keep.
func (db *pgCrashDB) integrity(r *crashRun) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := db.query(`SELECT c.relname::text AS rel, v.blkno, v.msg FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace, verify_heapam(c.oid) v
		WHERE n.nspname = 'public' AND c.relkind = 'r'`)
	if err != nil || len(rows) > 0 {
		r.errorf("verify_heapam: %v %v", rows, err)
	}
	if _, err := db.pool.Exec(ctx, `SELECT bt_index_check(c.oid, true) FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE a.amname = 'btree' AND n.nspname = 'public'`); err != nil {
		r.errorf("bt_index_check: %v", err)
	}
	for _, q := range []string{
		"SELECT count(*) FROM messages WHERE content_tsv @@ to_tsquery('ctxls', 'turn')",
		"SELECT count(*) FROM messages WHERE content_tsv @@ to_tsquery('ctxls', 'default:*')",
		"SELECT count(*) FROM sessions WHERE title_tsv @@ to_tsquery('ctxls', 'renamed')",
		"SELECT count(*) FROM sessions WHERE title_tsv @@ to_tsquery('ctxls', 'session')",
	} {
		// Both counts see one snapshot: a transaction the killed daemon
		// sent its COMMIT for may still land meanwhile.
		var n [2]int64
		err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			for i, settings := range [][]string{{"enable_seqscan = off"}, {"enable_seqscan = on", "enable_bitmapscan = off"}} {
				for _, set := range settings {
					if _, err := tx.Exec(ctx, "SET LOCAL "+set); err != nil {
						return err
					}
				}
				if err := tx.QueryRow(ctx, q).Scan(&n[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			r.errorf("%s: %v", q, err)
		}
		if n[0] != n[1] {
			r.errorf("%s: %d through the full-text index, %d scanning the table", q, n[0], n[1])
		}
	}
	if rows, err := db.query(`SELECT session_id, set_name FROM context_items GROUP BY session_id, set_name
		HAVING min(position) <> 0 OR max(position) <> count(*) - 1`); err != nil || len(rows) > 0 {
		r.errorf("context sets with gaps in their positions: %v %v", rows, err)
	}
	r.stat("integrity checks", 1)
}

// checkFolders: the PostgreSQL store's folders are a mirror of the
// database, brought up to date whenever a session is read; unlike the
// SQLite store's, Open repairs nothing in them. As a kill left them, each
// folder in sessions/ is a session's of the database, and no session has
// two; a folder may still bear the name of a rename the kill cut short
// (moved before the commit, rolled back) and a session made just before the
// kill may have none yet (the row is committed first). Then the next daemon
// reads every session (session.show), after which the folders are exactly
// the ones the database names, as in the SQLite store, and each sources/
// holds exactly the database's files, byte for byte.
func (db *pgCrashDB) checkFolders(r *crashRun, it *iter, dbFolders map[string]string) map[string]string {
	entries, err := os.ReadDir(filepath.Join(r.dataDir, "sessions"))
	if err != nil {
		r.errorf("reading sessions/: %v", err)
		return nil
	}
	bySuffix := map[string]string{} // "--" + the id's first 6 characters → session
	for id := range dbFolders {
		bySuffix["--"+id[:6]] = id
	}
	seen := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		id := ""
		if i := strings.LastIndex(name, "--"); i >= 0 {
			id = bySuffix[name[i:]]
		}
		switch {
		case id == "":
			r.errorf("sessions/%s belongs to no session in the database", name)
		case seen[id] != "":
			r.errorf("session %s has two folders: %s and %s", id, seen[id], name)
		case name != dbFolders[id]:
			r.stats["mirror folders under a name not committed"]++
		}
		if id != "" {
			seen[id] = name
		}
	}
	for id := range dbFolders {
		if seen[id] == "" {
			r.stats["sessions without a mirror folder after a kill"]++
		}
	}
	for id, folder := range dbFolders {
		var show api.ShowResult
		if err := it.s.Command(api.SessionShow, map[string]any{"sessionId": id}, &show); err != nil {
			r.errorf("session.show %s: %v", id, err)
			continue
		}
		if got := filepath.Base(show.Session.Folder); got != folder {
			r.errorf("session %s: session.show names folder %s, the database %s", id, got, folder)
		}
	}
	checkExactFolders(r, dbFolders)
	db.checkMirrorFiles(r, dbFolders)
	return dbFolders
}

// checkMirrorFiles: sources/ of each mirror folder holds the database's
// files, the same bytes; hidden files are checkFiles's to report.
func (db *pgCrashDB) checkMirrorFiles(r *crashRun, dbFolders map[string]string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := db.query("SELECT session_id, name, updated_at, octet_length(content) AS size FROM files WHERE subdir = 'sources'")
	if err != nil {
		r.errorf("reading files: %v", err)
		return
	}
	inDB := map[string]map[string]bool{}
	for _, x := range rows {
		id, name := str(x, "session_id"), str(x, "name")
		updated, _ := x["updated_at"].(float64)
		size, _ := x["size"].(float64)
		if inDB[id] == nil {
			inDB[id] = map[string]bool{}
		}
		inDB[id][name] = true
		key := fmt.Sprintf("%s/%s/%d", id, name, int64(updated))
		want, ok := db.dbHash[key]
		if !ok {
			var sum []byte
			if err := db.pool.QueryRow(ctx, "SELECT sha256(content) FROM files WHERE session_id = $1 AND subdir = 'sources' AND name = $2", id, name).Scan(&sum); err != nil {
				r.errorf("hashing %s/sources/%s in the database: %v", id, name, err)
				continue
			}
			copy(want[:], sum)
			db.dbHash[key] = want
		}
		path := filepath.Join(r.dataDir, "sessions", dbFolders[id], "sources", name)
		fi, err := os.Stat(path)
		if err != nil {
			r.errorf("session %s: sources/%s is in the database, not in the mirror: %v", id, name, err)
			continue
		}
		if fi.Size() != int64(size) {
			r.errorf("session %s: sources/%s has %d bytes in the mirror, %d in the database", id, name, fi.Size(), int64(size))
			continue
		}
		stamp := fmt.Sprintf("%s/%d/%d", path, fi.Size(), fi.ModTime().UnixNano())
		got, ok := db.diskHash[stamp]
		if !ok {
			data, err := os.ReadFile(path)
			if err != nil {
				r.errorf("session %s: %v", id, err)
				continue
			}
			got = sha256.Sum256(data)
			db.diskHash[stamp] = got
		}
		if got != want {
			r.errorf("session %s: sources/%s in the mirror differs from the database's", id, name)
		}
	}
	for id, folder := range dbFolders {
		entries, _ := os.ReadDir(filepath.Join(r.dataDir, "sessions", folder, "sources"))
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") && !inDB[id][e.Name()] {
				r.errorf("session %s: sources/%s is in the mirror, not in the database", id, e.Name())
			}
		}
	}
}
