package storetest

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
		if !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
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
	if _, err := s.WriteOutput(ctx, b.ID, "x.txt", []byte("x")); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("symlinked results/: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("written outside through results/: %v", entries)
	}
	// Size: exactly the limit is fine, one byte more is refused with both sizes.
	if w, err := s.WriteOutput(ctx, a.ID, "data/max.bin", make([]byte, session.MaxFileSize)); err != nil || w.Size != session.MaxFileSize {
		t.Errorf("25 MiB: %v", err)
	}
	_, err = s.WriteOutput(ctx, a.ID, "data/big.bin", make([]byte, session.MaxFileSize+1))
	if !errors.Is(err, session.ErrTooLarge) || !strings.Contains(err.Error(), "data/big.bin would be 26,214,401 bytes; the limit is 26,214,400 bytes (25 MiB)") {
		t.Errorf("too large: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(a.Folder, "data", "big.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused file was written: %v", err)
	}
	if _, err := s.WriteOutput(ctx, "nope", "x.txt", []byte("x")); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// testListFiles: sources/ lists the files added, results/ (and the other
// output folders) every file below it, sorted by path; fileCount counts
// sources/.
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
	if _, err := s.ListFiles(ctx, "nosuchsession", ""); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	got, _ := s.Get(ctx, a.ID)
	if got.FileCount != 2 {
		t.Errorf("fileCount %d, want 2", got.FileCount)
	}
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
	if !errors.Is(err, session.ErrTooLarge) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want it to end %q", err, want)
	}
	if strings.Contains(err.Error(), "25 MB") {
		t.Errorf("rounded size in %v", err)
	}
}

// testEnforceSoftLimitFollowsNoLinks: a data/ folder that is a symbolic
// link, or a link inside data/, never leads the clean-up outside.
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

func testPruneInactive(t *testing.T, e *Env) {
	s := e.S
	now := time.Now()
	at := func(d time.Duration) { e.SetClock(s, func() time.Time { return now.Add(-d) }) }
	at(100 * 24 * time.Hour)
	old, _ := s.Create(ctx, "old")
	mustWrite(t, filepath.Join(old.Folder, "results", "r.md"), 10, time.Time{})
	at(40 * 24 * time.Hour)
	middle, _ := s.Create(ctx, "middle")
	at(100 * 24 * time.Hour)
	revived, _ := s.Create(ctx, "revived")
	at(0)
	s.AppendMessage(ctx, &session.Message{SessionID: revived.ID, Role: session.RoleUser, Content: "back to it"}) // activity now
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
		if _, err := s.Get(ctx, id); !errors.Is(err, session.ErrNotFound) {
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
		"results/link":      session.ErrInvalid, // a client would write through it
		"sources/a.txt":     session.ErrInvalid,
		"results/../x":      session.ErrInvalid,
		"results/big.bin":   session.ErrTooLarge,
		"results/charts":    session.ErrInvalid, // a folder
		"data/.hidden/file": session.ErrInvalid,
	} {
		size := int64(1)
		if want == session.ErrTooLarge {
			size = session.MaxFileSize + 1
		}
		if _, _, err := s.OutputTarget(ctx, a.ID, path, size); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
	if _, _, err := s.OutputTarget(ctx, "nosuch", "results/a", 1); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// testEmptySessions (both stores): a list with NonEmpty leaves out the
// sessions that hold nothing a person made (no message, file, context
// but the editor's view, or title of the user's), pages included, and
// PruneEmpty deletes those of them older than the cutoff, but the ones it
// is told to keep, with their folders; sessions with anything in them
// stay, however old.
func testEmptySessions(t *testing.T, e *Env) {
	s := e.S
	now := time.Now()
	e.SetClock(s, func() time.Time { return now.Add(-2 * time.Hour) })
	mk := func(title string) *session.Session {
		t.Helper()
		ss, err := s.Create(ctx, title)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	empty, applet, kept := mk(""), mk(""), mk("")
	if _, err := s.UpdateContext(ctx, applet.ID, "applet", []string{"editor?file=/w/a.go&line=3"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	named := mk("Named by the user")
	withMsg := mk("")
	if err := s.AppendMessage(ctx, &session.Message{SessionID: withMsg.ID, Role: session.RoleUser, Content: "a question", Status: session.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	withCtx := mk("")
	if _, err := s.UpdateContext(ctx, withCtx.ID, "files", []string{"/w/a.go"}, session.ModeReplace, session.AddedByUser, nil); err != nil {
		t.Fatal(err)
	}
	withFile := mk("")
	if _, err := s.AddFile(ctx, withFile.ID, "notes.txt", strings.NewReader("n")); err != nil {
		t.Fatal(err)
	}
	e.SetClock(s, time.Now)
	fresh := mk("")
	full := []string{named.ID, withMsg.ID, withCtx.ID, withFile.ID}

	ids := func(list []session.Session) []string {
		out := []string{}
		for _, ss := range list {
			out = append(out, ss.ID)
		}
		slices.Sort(out)
		return out
	}
	want := slices.Clone(full)
	slices.Sort(want)
	list, next, err := s.List(ctx, session.ListOptions{NonEmpty: true})
	if err != nil || next != "" || !slices.Equal(ids(list), want) {
		t.Errorf("NonEmpty list: %v %q %v, want %v", ids(list), next, err, want)
	}
	var paged []session.Session
	cursor := ""
	for range 5 {
		page, next, err := s.List(ctx, session.ListOptions{NonEmpty: true, Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if !slices.Equal(ids(paged), want) {
		t.Errorf("NonEmpty pages of 3: %v, want %v", ids(paged), want)
	}
	if all, _, err := s.List(ctx, session.ListOptions{}); err != nil || len(all) != 8 {
		t.Errorf("the whole list: %d sessions %v, want 8", len(all), err)
	}

	// A cutoff before they were made: nothing goes.
	if gone, err := s.PruneEmpty(ctx, now.Add(-3*time.Hour), nil); err != nil || len(gone) != 0 {
		t.Errorf("PruneEmpty before any was made: %v %v", gone, err)
	}
	gone, err := s.PruneEmpty(ctx, now.Add(-time.Hour), []string{kept.ID})
	slices.Sort(gone)
	wantGone := []string{empty.ID, applet.ID}
	slices.Sort(wantGone)
	if err != nil || !slices.Equal(gone, wantGone) {
		t.Fatalf("PruneEmpty: %v %v, want %v", gone, err, wantGone)
	}
	for _, ss := range []*session.Session{empty, applet} {
		if _, err := s.Get(ctx, ss.ID); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("empty session %s still there: %v", ss.ID, err)
		}
		if _, err := os.Stat(ss.Folder); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("its folder is left: %v", err)
		}
	}
	for _, id := range append([]string{kept.ID, fresh.ID}, full...) {
		if _, err := s.Get(ctx, id); err != nil {
			t.Errorf("session %s was removed: %v", id, err)
		}
	}
	// Kept no more, it goes; the fresh one is younger than the cutoff.
	if gone, err := s.PruneEmpty(ctx, now.Add(-time.Hour), nil); err != nil || !slices.Equal(gone, []string{kept.ID}) {
		t.Errorf("PruneEmpty without keep: %v %v, want %v", gone, err, []string{kept.ID})
	}
}
