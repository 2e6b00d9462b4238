package postgres

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxls/ctxls/session"
)

// TestPostgresRenameAnswersItsOwnTitle: two machines rename one session at
// once; each Rename returns the session as its own rename left it, with
// the title it set, as the SQLite store's does. Found by
// lsp.TestFourDaemonsOnePostgres: session.rename answered with the title
// another daemon set a moment later (Rename reads the session again after
// its commit).
func TestPostgresRenameAnswersItsOwnTitle(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t)
	ss, err := a.Create(ctx, "Shared")
	if err != nil {
		t.Fatal(err)
	}
	const renames = 40
	var wrong atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	for i, s := range []*Store{a, b} {
		wg.Go(func() {
			for n := range renames {
				title := fmt.Sprintf("machine %d rename %d", i, n)
				got, err := s.Rename(ctx, ss.ID, title, session.TitleUser)
				if err != nil {
					t.Errorf("machine %d: %v", i, err)
					return
				}
				if got.Title != title {
					wrong.Add(1)
					first.Do(func() { t.Errorf("machine %d renamed to %q, Rename answered %q", i, title, got.Title) })
				}
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		t.Errorf("%d of %d renames answered another's title", n, 2*renames)
	}
}

// TestPostgresDeletedElsewhereLeavesNoFolder: a session deleted on one
// machine leaves no folder in another machine's mirror once that machine's
// Watch has reported the deletion, as the deleting machine's Delete
// removes its own. Found by lsp.TestFourDaemonsOnePostgres: every daemon
// that followed a session's changes (the door reads the session on each
// Change, which makes its mirror folder) kept the folder of a session
// deleted elsewhere, with its files, for good.
func TestPostgresDeletedElsewhereLeavesNoFolder(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t)
	wb := watch(t, b)
	listening(t, b, 1)
	ss, err := a.Create(ctx, "Deleted elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddFile(ctx, ss.ID, "notes.txt", strings.NewReader("notes")); err != nil {
		t.Fatal(err)
	}
	onB, err := b.Get(ctx, ss.ID) // as the door does on a Change
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(onB.Folder); err != nil {
		t.Fatalf("b's mirror folder: %v", err)
	}
	if err := a.Delete(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	wb.waitFor(t, "deleting the session", func(c session.Change) bool { return c.SessionID == ss.ID && c.Deleted })
	if _, err := os.Stat(onB.Folder); !os.IsNotExist(err) {
		t.Errorf("deleted on another machine, the session keeps its folder %s in this machine's mirror (%v)", onB.Folder, err)
	}
}

// twoMachines opens two stores on one fresh database, each with a data
// directory of its own, as two machines of one person.
func twoMachines(t *testing.T) (a, b *Store) {
	t.Helper()
	dsn := newPGDatabase(t)
	open := func() *Store {
		s, err := Open(ctx, t.TempDir(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return open(), open()
}
