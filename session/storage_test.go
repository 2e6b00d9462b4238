package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

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

func TestWriteOutput(t *testing.T) { forEachStore(t, testWriteOutput) }

func testWriteOutput(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "outputs")
	for _, tc := range []struct{ path, sub, name string }{
		{"report.md", "results", "report.md"},
		{"results/summary.md", "results", "summary.md"},
		{"scripts/clean.py", "scripts", "clean.py"},
		{"data/raw.json", "data", "raw.json"},
		{"results/charts/2026/q1.csv", "results", "charts/2026/q1.csv"},
		{"data/results", "data", "results"},
	} {
		w, err := s.WriteOutput(ctx, a.ID, tc.path, []byte("content of "+tc.path))
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if w.Subdir != tc.sub || w.Name != tc.name || w.Size != int64(len("content of "+tc.path)) || w.Replaced {
			t.Errorf("%s: %+v", tc.path, w)
		}
		if b, err := os.ReadFile(filepath.Join(a.Folder, tc.sub, filepath.FromSlash(tc.name))); err != nil || string(b) != "content of "+tc.path {
			t.Errorf("%s on disk: %q %v", tc.path, b, err)
		}
	}
	// Replacing says so.
	w, err := s.WriteOutput(ctx, a.ID, "results/report.md", []byte("v2"))
	if err != nil || !w.Replaced || w.Size != 2 {
		t.Errorf("replace: %+v %v", w, err)
	}
	if b, _ := os.ReadFile(filepath.Join(a.Folder, "results", "report.md")); string(b) != "v2" {
		t.Errorf("replaced content %q", b)
	}
	// Nothing staged is left behind.
	if entries, _ := os.ReadDir(filepath.Join(s.DataDir(), "tmp")); len(entries) != 0 {
		t.Errorf("tmp/ after writes: %v", entries)
	}

	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "precious.txt"), 8, time.Time{})
	if err := os.Symlink(outside, filepath.Join(a.Folder, "results", "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "precious.txt"), filepath.Join(a.Folder, "scripts", "link.txt")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(a.Folder, "results", "afolder"), 0o700)
	for _, tc := range []struct{ path, want string }{
		{"", "path is required"},
		{"../x.txt", `must not contain ".."`},
		{"results/../sources/x.txt", `must not contain ".."`},
		{"results/./x.txt", `must not contain "."`},
		{"/etc/passwd", "is absolute"},
		{"sources/data.csv", "read-only"},
		{"sources/sub/data.csv", "read-only"},
		{"other/x.txt", "must start with results/, scripts/ or data/"},
		{"x\x00.txt", "NUL"},
		{"results/x\n.txt", "control character"},
		{".env", "starts with a dot"},
		{"results/.hidden", "starts with a dot"},
		{"data/.cache/x.json", "starts with a dot"},
		{"results/", "empty part"},
		{"results//x", "empty part"},
		{`results\x.txt`, `contains "\"`},
		{"results/escape/new.txt", "symbolic link"},
		{"results/report.md/x", "is a file, not a folder"},
		{"results/afolder", "is a folder"},
		{"results/" + strings.Repeat("a/", 9) + "x", "folders deep"},
		{"results/" + strings.Repeat("n", 256), "the limit is 255"},
	} {
		_, err := s.WriteOutput(ctx, a.ID, tc.path, []byte("x"))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an invalid-argument error mentioning %q", tc.path, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("written outside through a symlinked folder: %v", entries)
	}
	// A symbolic link as the file itself is replaced as a link.
	if w, err := s.WriteOutput(ctx, a.ID, "scripts/link.txt", []byte("new")); err != nil || !w.Replaced {
		t.Errorf("over a symlink: %+v %v", w, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "precious.txt")); string(b) != "xxxxxxxx" {
		t.Errorf("written through a symlink: %q", b)
	}
	// results/ itself a symlink: refused.
	b, _ := s.Create(ctx, "")
	os.RemoveAll(filepath.Join(b.Folder, "results"))
	os.Symlink(outside, filepath.Join(b.Folder, "results"))
	if _, err := s.WriteOutput(ctx, b.ID, "x.txt", []byte("x")); !errors.Is(err, ErrInvalid) {
		t.Errorf("symlinked results/: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("written outside through results/: %v", entries)
	}
	// Size: exactly the limit is fine, one byte more is refused with both sizes.
	if w, err := s.WriteOutput(ctx, a.ID, "data/max.bin", make([]byte, MaxFileSize)); err != nil || w.Size != MaxFileSize {
		t.Errorf("25 MiB: %v", err)
	}
	_, err = s.WriteOutput(ctx, a.ID, "data/big.bin", make([]byte, MaxFileSize+1))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "data/big.bin would be 26,214,401 bytes; the limit is 26,214,400 bytes (25 MiB)") {
		t.Errorf("too large: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(a.Folder, "data", "big.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused file was written: %v", err)
	}
	if _, err := s.WriteOutput(ctx, "nope", "x.txt", []byte("x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// TestListFilesListsFilesOnly is the SQLite store's: the files are put in
// the session folder by hand, and only where the folder is the store are
// they the session's (the PostgreSQL store's files are in its database and
// mirrored to the folder). TestListFiles is its conformance part.
func TestListFilesListsFilesOnly(t *testing.T) {
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

// TestListFiles: sources/ lists the files added, results/ (and the other
// output folders) every file below it, sorted by path; fileCount counts
// sources/.
func TestListFiles(t *testing.T) { forEachStore(t, testListFiles) }

func testListFiles(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	for _, name := range []string{"b.csv", "a.txt"} {
		if _, err := s.AddFile(ctx, a.ID, name, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"results/top.md", "results/charts/q1.png", "results/charts/deep/q2.png", "results/charts-old.md", "data/raw.json"} {
		if _, err := s.WriteOutput(ctx, a.ID, path, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		sub  string
		want []string
	}{
		{"", []string{"a.txt", "b.csv"}},
		{"sources", []string{"a.txt", "b.csv"}},
		{"results", []string{"charts-old.md", "charts/deep/q2.png", "charts/q1.png", "top.md"}},
		{"data", []string{"raw.json"}},
		{"scripts", []string{}},
	} {
		got, err := s.ListFiles(ctx, a.ID, tc.sub)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ListFiles(%q) = %q %v, want %q", tc.sub, got, err, tc.want)
		}
	}
	if _, err := s.ListFiles(ctx, "nosuchsession", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	got, _ := s.Get(ctx, a.ID)
	if got.FileCount != 2 {
		t.Errorf("fileCount %d, want 2", got.FileCount)
	}
}

func TestAddFileFromPathTooLargeSaysExactSizes(t *testing.T) {
	forEachStore(t, testAddFileFromPathTooLargeSaysExactSizes)
}

func testAddFileFromPathTooLargeSaysExactSizes(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	big := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(27_000_000) // sparse
	f.Close()
	_, err = s.AddFileFromPath(ctx, a.ID, big)
	want := big + " is 27,000,000 bytes; the limit is 26,214,400 bytes (25 MiB)"
	if !errors.Is(err, ErrTooLarge) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want it to end %q", err, want)
	}
	if strings.Contains(err.Error(), "25 MB") {
		t.Errorf("rounded size in %v", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1,000 bytes",
		27_000_000: "27,000,000 bytes", 26214400: "26,214,400 bytes", -1234: "-1,234 bytes"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestEnforceSoftLimit: over the limit, files in data/ folders of all
// sessions go, least recently modified first, until the directory is under;
// sources/, results/, scripts/ and messages stay, and so does the sessions'
// activity time. It is the SQLite store's: the files are put in the session
// folders by hand with the times it needs, and the directory's size
// includes the database (checkpointed first).
func TestEnforceSoftLimit(t *testing.T) {
	s := openTest(t)
	a, _ := s.Create(ctx, "alpha")
	b, _ := s.Create(ctx, "beta")
	if err := s.AppendMessage(ctx, &Message{SessionID: a.ID, Role: RoleUser, Content: "keep this message"}); err != nil {
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
	usage := DirSize(s.dir)
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
	if got := DirSize(s.dir); got > limit {
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

// TestEnforceSoftLimitFollowsNoLinks: a data/ folder that is a symbolic
// link, or a link inside data/, never leads the clean-up outside.
func TestEnforceSoftLimitFollowsNoLinks(t *testing.T) {
	forEachStore(t, testEnforceSoftLimitFollowsNoLinks)
}

func testEnforceSoftLimitFollowsNoLinks(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "big.bin"), 2<<20, time.Now().Add(-100*time.Hour))
	os.RemoveAll(filepath.Join(a.Folder, "data"))
	os.Symlink(outside, filepath.Join(a.Folder, "data"))
	b, _ := s.Create(ctx, "")
	os.Symlink(outside, filepath.Join(b.Folder, "data", "linked"))
	os.Symlink(filepath.Join(outside, "big.bin"), filepath.Join(b.Folder, "data", "file-link"))
	c, err := s.EnforceSoftLimit(ctx, 1)
	if err != nil || len(c.Removed) != 0 {
		t.Errorf("%+v %v", c, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "big.bin")); err != nil {
		t.Errorf("removed outside: %v", err)
	}
}

// TestDiskUsage is the SQLite store's: the files are put in the session
// folders by hand, and the database is a file in the data directory.
func TestDiskUsage(t *testing.T) {
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
	if len(u.Sessions) != 2 || u.Sessions[0].ID != b.ID || u.Sessions[0].Size != DirSize(b.Folder) || u.Sessions[0].Size < 5000 {
		t.Errorf("sessions, largest first: %+v", u.Sessions)
	}
	db, _ := os.Stat(filepath.Join(s.dir, "ctxls.db"))
	if u.Database < db.Size() || u.Total != DirSize(s.dir) || u.Other < 700 ||
		u.Total != u.Database+u.Sessions[0].Size+u.Sessions[1].Size+u.Other {
		t.Errorf("usage %+v (db file %d)", u, db.Size())
	}
}

func TestPruneInactive(t *testing.T) { forEachStore(t, testPruneInactive) }

func testPruneInactive(t *testing.T, s Store) {
	now := time.Now()
	at := func(d time.Duration) { setClock(s, func() time.Time { return now.Add(-d) }) }
	at(100 * 24 * time.Hour)
	old, _ := s.Create(ctx, "old")
	mustWrite(t, filepath.Join(old.Folder, "results", "r.md"), 10, time.Time{})
	at(40 * 24 * time.Hour)
	middle, _ := s.Create(ctx, "middle")
	at(100 * 24 * time.Hour)
	revived, _ := s.Create(ctx, "revived")
	at(0)
	s.AppendMessage(ctx, &Message{SessionID: revived.ID, Role: RoleUser, Content: "back to it"}) // activity now
	fresh, _ := s.Create(ctx, "fresh")

	cutoff := now.Add(-90 * 24 * time.Hour)
	dry, err := s.PruneInactive(ctx, cutoff, true)
	if err != nil || len(dry) != 1 || dry[0].ID != old.ID {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if _, err := s.Get(ctx, old.ID); err != nil {
		t.Errorf("the dry run deleted: %v", err)
	}
	del, err := s.PruneInactive(ctx, now.Add(-30*24*time.Hour), false)
	if err != nil || len(del) != 2 || del[0].ID != old.ID || del[1].ID != middle.ID {
		t.Fatalf("prune: %+v %v", del, err)
	}
	for _, id := range []string{old.ID, middle.ID} {
		if _, err := s.Get(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s still there: %v", id, err)
		}
	}
	if _, err := os.Stat(old.Folder); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder left: %v", err)
	}
	for _, id := range []string{revived.ID, fresh.ID} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Errorf("active session %s pruned: %v", id, err)
		}
	}
}

func TestParseLimitMB(t *testing.T) {
	for in, want := range map[string]int{"": 0, " 1 ": 1, "1024": 1024} {
		if got, err := ParseLimitMB(in); err != nil || got != want {
			t.Errorf("ParseLimitMB(%q) = %d %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "-5", "1.5", "lots", "1GB"} {
		if _, err := ParseLimitMB(in); err == nil {
			t.Errorf("ParseLimitMB(%q) accepted", in)
		}
	}
}

// TestEnforceSoftLimitTruncatesTheLogFirst: space the write-ahead log holds
// is given back before any file is removed.
func TestEnforceSoftLimitTruncatesTheLogFirst(t *testing.T) {
	s := openTest(t)
	a, _ := s.Create(ctx, "")
	for i := range 200 {
		if err := s.AppendMessage(ctx, &Message{SessionID: a.ID, Role: RoleUser, Content: strings.Repeat("word ", 800) + string(rune('a'+i%26))}); err != nil {
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
	usage := DirSize(s.dir)
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

func TestOutputTarget(t *testing.T) { forEachStore(t, testOutputTarget) }

func testOutputTarget(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "outputs")
	sess, _ := s.Get(ctx, a.ID)
	target, w, err := s.OutputTarget(ctx, a.ID, "results/charts/q1.csv", 12)
	if err != nil || target != filepath.Join(sess.Folder, "results", "charts", "q1.csv") || w.Replaced || w.Subdir != "results" || w.Name != "charts/q1.csv" {
		t.Fatalf("target %q %+v %v", target, w, err)
	}
	if fi, err := os.Stat(filepath.Dir(target)); err != nil || !fi.IsDir() {
		t.Errorf("the folder on the way was not made: %v", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OutputTarget wrote the file: %v", err)
	}
	os.WriteFile(target, []byte("x"), 0o600)
	if err := s.OutputWritten(ctx, a.ID, "results/charts/q1.csv", []byte("x")); err != nil {
		t.Errorf("OutputWritten: %v", err)
	}
	if _, w, err := s.OutputTarget(ctx, a.ID, "results/charts/q1.csv", 1); err != nil || !w.Replaced {
		t.Errorf("existing file: %+v %v", w, err)
	}
	os.Symlink("/etc/passwd", filepath.Join(sess.Folder, "results", "link"))
	for path, want := range map[string]error{
		"results/link":      ErrInvalid, // a client would write through it
		"sources/a.txt":     ErrInvalid,
		"results/../x":      ErrInvalid,
		"results/big.bin":   ErrTooLarge,
		"results/charts":    ErrInvalid, // a folder
		"data/.hidden/file": ErrInvalid,
	} {
		size := int64(1)
		if want == ErrTooLarge {
			size = MaxFileSize + 1
		}
		if _, _, err := s.OutputTarget(ctx, a.ID, path, size); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
	if _, _, err := s.OutputTarget(ctx, "nosuch", "results/a", 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}
