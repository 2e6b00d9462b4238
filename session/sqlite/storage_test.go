package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

// TestListFilesListsFilesOnly is the SQLite store's: the files are put in
// the session folder by hand, and only where the folder is the store are
// they the session's (the PostgreSQL store's files are in its database and
// mirrored to the folder). TestListFiles is its conformance part.
func TestListFilesListsFilesOnly(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, _ := s.Create(ctx, "")
	src := filepath.Join(a.Folder, "sources")
	mustWrite(t, filepath.Join(src, "b.csv"), 1, time.Time{})
	mustWrite(t, filepath.Join(src, "a.txt"), 1, time.Time{})
	mustWrite(t, filepath.Join(src, ".hidden"), 1, time.Time{})
	mustWrite(t, filepath.Join(src, "sub", "inner.txt"), 1, time.Time{}) // a folder in sources/
	os.Symlink(t.TempDir(), filepath.Join(src, "dirlink"))               // a link to a folder
	os.Symlink(filepath.Join(src, "a.txt"), filepath.Join(src, "filelink"))
	res := filepath.Join(a.Folder, "results")
	mustWrite(t, filepath.Join(res, "top.md"), 1, time.Time{})
	mustWrite(t, filepath.Join(res, "charts", "q1.png"), 1, time.Time{})
	mustWrite(t, filepath.Join(res, "charts", "deep", "q2.png"), 1, time.Time{})
	mustWrite(t, filepath.Join(res, "charts-old.md"), 1, time.Time{})
	mustWrite(t, filepath.Join(res, ".cache", "x"), 1, time.Time{})
	os.MkdirAll(filepath.Join(res, "empty"), 0o700)
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "not-mine.txt"), 1, time.Time{})
	os.Symlink(outside, filepath.Join(res, "linked"))

	for _, tc := range []struct {
		sub  string
		want []string
	}{
		{"", []string{"a.txt", "b.csv", "filelink"}},
		{"sources", []string{"a.txt", "b.csv", "filelink"}},
		{"results", []string{"charts-old.md", "charts/deep/q2.png", "charts/q1.png", "top.md"}},
		{"scripts", []string{}},
	} {
		got, err := s.ListFiles(ctx, a.ID, tc.sub)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ListFiles(%q) = %q %v, want %q", tc.sub, got, err, tc.want)
		}
	}
	got, _ := s.Get(ctx, a.ID)
	if got.FileCount != 3 {
		t.Errorf("fileCount %d, want 3 (files only, directly in sources/)", got.FileCount)
	}
}

// TestEnforceSoftLimit: over the limit, files in data/ folders of all
// sessions go, least recently modified first, until the directory is under;
// sources/, results/, scripts/ and messages stay, and so does the sessions'
// activity time. It is the SQLite store's: the files are put in the session
// folders by hand with the times it needs, and the directory's size
// includes the database (checkpointed first).
func TestEnforceSoftLimit(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, _ := s.Create(ctx, "alpha")
	b, _ := s.Create(ctx, "beta")
	if err := s.AppendMessage(ctx, &session.Message{SessionID: a.ID, Role: session.RoleUser, Content: "keep this message"}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-10 * time.Hour)
	const kb = 1 << 10
	keep := map[string]int{ // never removed, however old
		filepath.Join(a.Folder, "sources", "in.csv"):  100 * kb,
		filepath.Join(a.Folder, "results", "out.md"):  100 * kb,
		filepath.Join(b.Folder, "scripts", "run.py"):  50 * kb,
		filepath.Join(b.Folder, "results", "old.txt"): 10 * kb,
	}
	for p, n := range keep {
		mustWrite(t, p, n, base.Add(-24*time.Hour))
	}
	// data/ files, oldest first, spread over both sessions.
	order := []string{
		filepath.Join(b.Folder, "data", "one.json"),
		filepath.Join(a.Folder, "data", "nested", "two.json"),
		filepath.Join(b.Folder, "data", "three.json"),
		filepath.Join(a.Folder, "data", "four.json"),
		filepath.Join(a.Folder, "data", "five.json"),
	}
	for i, p := range order {
		mustWrite(t, p, 300*kb, base.Add(time.Duration(i)*time.Minute))
	}
	before, _ := s.Get(ctx, a.ID)
	s.FlushHistory()
	s.checkpoint(ctx) // as the clean-up does first: the sizes below are then exact
	usage := session.DirSize(s.dir)
	// Under the limit: nothing happens.
	c, err := s.EnforceSoftLimit(ctx, usage+1)
	if err != nil || len(c.Removed) != 0 || c.Summary() != "" {
		t.Fatalf("under the limit: %+v %v", c, err)
	}
	// A limit that three of the data files' removal meets, two not.
	limit := usage - 2*300*kb - 100*kb
	c, err = s.EnforceSoftLimit(ctx, limit)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range c.Removed {
		names = append(names, r.Title+":"+r.Name)
	}
	if want := []string{"beta:one.json", "alpha:nested/two.json", "beta:three.json"}; !slices.Equal(names, want) {
		t.Errorf("removed %v, want %v", names, want)
	}
	if c.After > limit || c.After+300*kb <= limit || c.Before < c.After {
		t.Errorf("sizes: before %d after %d limit %d", c.Before, c.After, limit)
	}
	if got := session.DirSize(s.dir); got > limit {
		t.Errorf("still %d bytes, over %d", got, limit)
	}
	for i, p := range order {
		_, err := os.Stat(p)
		if gone := errors.Is(err, os.ErrNotExist); gone != (i < 3) {
			t.Errorf("%s: gone %v", p, gone)
		}
	}
	if _, err := os.Stat(filepath.Join(a.Folder, "data", "nested")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the emptied folder below data/ is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a.Folder, "data")); err != nil {
		t.Errorf("data/ itself removed: %v", err)
	}
	for p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	msgs, _ := s.Messages(ctx, a.ID)
	after, _ := s.Get(ctx, a.ID)
	if len(msgs) != 1 || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("messages %d, updatedAt %v → %v", len(msgs), before.UpdatedAt, after.UpdatedAt)
	}
	sum := c.Summary()
	for _, want := range []string{"3 intermediate files", `"beta" data/one.json`, `"alpha" data/nested/two.json`, `"beta" data/three.json`, "oldest"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q: %s", want, sum)
		}
	}
	// A limit below what the user's files alone take: every data/ file goes,
	// nothing else, and the summary says it is still over.
	c, err = s.EnforceSoftLimit(ctx, 1<<10)
	if err != nil || len(c.Removed) != 2 || c.After <= 1<<10 || !strings.Contains(c.Summary(), "still over the limit") {
		t.Errorf("tiny limit: %+v %v\n%s", c, err, c.Summary())
	}
	for p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

// TestDiskUsage is the SQLite store's: the files are put in the session
// folders by hand, and the database is a file in the data directory.
func TestDiskUsage(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, _ := s.Create(ctx, "small")
	b, _ := s.Create(ctx, "big")
	mustWrite(t, filepath.Join(a.Folder, "sources", "x"), 1000, time.Time{})
	mustWrite(t, filepath.Join(b.Folder, "data", "deep", "y"), 5000, time.Time{})
	mustWrite(t, filepath.Join(s.dir, "tmp", "stray"), 700, time.Time{})
	u, err := s.DiskUsage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Sessions) != 2 || u.Sessions[0].ID != b.ID || u.Sessions[0].Size != session.DirSize(b.Folder) || u.Sessions[0].Size < 5000 {
		t.Errorf("sessions, largest first: %+v", u.Sessions)
	}
	db, _ := os.Stat(filepath.Join(s.dir, "ctxls.db"))
	if u.Database < db.Size() || u.Total != session.DirSize(s.dir) || u.Other < 700 ||
		u.Total != u.Database+u.Sessions[0].Size+u.Sessions[1].Size+u.Other {
		t.Errorf("usage %+v (db file %d)", u, db.Size())
	}
}

// TestEnforceSoftLimitTruncatesTheLogFirst: space the write-ahead log holds
// is given back before any file is removed.
func TestEnforceSoftLimitTruncatesTheLogFirst(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, _ := s.Create(ctx, "")
	for i := range 200 {
		if err := s.AppendMessage(ctx, &session.Message{SessionID: a.ID, Role: session.RoleUser, Content: strings.Repeat("word ", 800) + string(rune('a'+i%26))}); err != nil {
			t.Fatal(err)
		}
	}
	wal := filepath.Join(s.dir, "ctxls.db-wal")
	fi, err := os.Stat(wal)
	if err != nil || fi.Size() < 512<<10 {
		t.Fatalf("the log did not grow: %v %v", fi, err)
	}
	data := filepath.Join(a.Folder, "data", "keep.bin")
	mustWrite(t, data, 100<<10, time.Now().Add(-time.Hour))
	s.FlushHistory() // history.md written now, not during the clean-up
	usage := session.DirSize(s.dir)
	limit := usage - fi.Size()/2
	c, err := s.EnforceSoftLimit(ctx, limit)
	if err != nil || len(c.Removed) != 0 || c.After > limit || c.Before != usage {
		t.Errorf("%+v %v (limit %d)", c, err, limit)
	}
	if _, err := os.Stat(data); err != nil {
		t.Errorf("a file was removed although truncating the log was enough: %v", err)
	}
	if fi, _ := os.Stat(wal); fi != nil && fi.Size() != 0 {
		t.Errorf("the log is %d bytes after the clean-up", fi.Size())
	}
	if msgs, _ := s.Messages(ctx, a.ID); len(msgs) != 200 {
		t.Errorf("%d messages after the checkpoint", len(msgs))
	}
}

func mustWrite(t *testing.T, path string, size int, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}
