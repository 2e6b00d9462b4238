package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

// TestRenameRacesWritesAcrossProcesses: one process renames a session over
// and over (moving its folder) while two others add and remove files and
// append messages in it. Every write must land in the folder the database
// names, none may fail, no old folder may come back, and history.md must
// end up with every message under the last title.
func TestRenameRacesWritesAcrossProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv("CTXLS_TEST_RACE_DIR") != "" {
		return // the child part runs in TestRenameRaceChild
	}
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.Create(ctx, "race 0")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	const n = 40
	start := filepath.Join(dir, "start")
	var wg sync.WaitGroup
	out := make([][]byte, len(raceRoles))
	errs := make([]error, len(raceRoles))
	for i, role := range raceRoles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestRenameRaceChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "CTXLS_TEST_RACE_DIR="+dir, "CTXLS_TEST_RACE_ROLE="+role,
				"CTXLS_TEST_RACE_SESSION="+ss.ID, "CTXLS_TEST_RACE_N="+strconv.Itoa(n), "CTXLS_TEST_RACE_START="+start)
			out[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	// Let the children open the store, then start them together.
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, role := range raceRoles {
		if errs[i] != nil {
			t.Errorf("%s: %v\n%s", role, errs[i], out[i])
		}
	}

	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkRace(t, st, dir, ss.ID, n)
}

// TestRenameRaceChild is a child process of
// TestRenameRacesWritesAcrossProcesses.
func TestRenameRaceChild(t *testing.T) {
	dir := os.Getenv("CTXLS_TEST_RACE_DIR")
	if dir == "" {
		t.Skip("run by TestRenameRacesWritesAcrossProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("CTXLS_TEST_RACE_N"))
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(os.Getenv("CTXLS_TEST_RACE_START")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no start signal")
		}
	}
	raceWorker(t, s, os.Getenv("CTXLS_TEST_RACE_ROLE"), os.Getenv("CTXLS_TEST_RACE_SESSION"), n)
}

// TestRenameRacesWritesInProcess is the same race between goroutines of one
// process sharing a Store.
func TestRenameRacesWritesInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ss, err := s.Create(ctx, "race 0")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	for _, role := range raceRoles {
		wg.Go(func() { raceWorker(t, s, role, ss.ID, n) })
	}
	wg.Wait()
	checkRace(t, s, dir, ss.ID, n)
}

var raceRoles = []string{"rename", "write-a", "write-b"}

// raceWorker renames the session n times ("rename"), or adds n files,
// appends n messages and removes every fifth file (any other role).
func raceWorker(t *testing.T, s *Store, role, id string, n int) {
	for i := range n {
		if role == "rename" {
			if _, err := s.Rename(ctx, id, fmt.Sprintf("race %d", i+1), session.TitleUser); err != nil {
				t.Errorf("rename %d: %v", i, err)
			}
			continue
		}
		name := fmt.Sprintf("%s-%03d.txt", role, i)
		if _, err := s.AddFile(ctx, id, name, strings.NewReader("content of "+name)); err != nil {
			t.Errorf("add %s: %v", name, err)
		}
		if err := s.AppendMessage(ctx, &session.Message{SessionID: id, Role: session.RoleUser, Content: fmt.Sprintf("%s message %d", role, i)}); err != nil {
			t.Errorf("append %d: %v", i, err)
		}
		if i%5 == 4 {
			if err := s.RemoveFile(ctx, id, name); err != nil {
				t.Errorf("remove %s: %v", name, err)
			}
		}
		if _, err := s.ListFiles(ctx, id, "sources"); err != nil {
			t.Errorf("list: %v", err)
		}
	}
}

// checkRace checks the end state of a race run: the last title, the one
// folder, every file and message, and a current history.md.
func checkRace(t *testing.T, st *Store, dir, id string, n int) {
	t.Helper()
	// history.md is written in the background: what is still pending is
	// written now (in another process, by its Close).
	if err := st.FlushHistory(); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("race %d", n); got.Title != want {
		t.Errorf("title %q, want %q", got.Title, want)
	}
	// The folder the database names is the only one on disk.
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	var folders []string
	for _, e := range entries {
		folders = append(folders, e.Name())
	}
	if !slices.Equal(folders, []string{filepath.Base(got.Folder)}) {
		t.Errorf("folders on disk %q, database names %q", folders, filepath.Base(got.Folder))
	}
	// Every file added and not removed is there, and nothing else.
	var want []string
	for _, w := range []string{"write-a", "write-b"} {
		for i := range n {
			if i%5 != 4 {
				want = append(want, fmt.Sprintf("%s-%03d.txt", w, i))
			}
		}
	}
	slices.Sort(want)
	names, err := st.ListFiles(ctx, id, "sources")
	if err != nil || !slices.Equal(names, want) {
		t.Errorf("files: %d (%v), want %d", len(names), err, len(want))
		for _, w := range want {
			if !slices.Contains(names, w) {
				t.Errorf("missing %s", w)
			}
		}
	}
	for _, name := range want {
		data, err := os.ReadFile(filepath.Join(got.Folder, "sources", name))
		if err != nil || string(data) != "content of "+name {
			t.Errorf("%s: %q %v", name, data, err)
		}
	}
	all, _ := os.ReadDir(filepath.Join(got.Folder, "sources"))
	for _, e := range all {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	// history.md is current: the last title and every message.
	msgs, err := st.Messages(ctx, id)
	if err != nil || len(msgs) != 2*n {
		t.Errorf("%d messages (%v), want %d", len(msgs), err, 2*n)
	}
	hist, err := os.ReadFile(filepath.Join(got.Folder, "history.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(hist), "# "+got.Title+"\n") {
		t.Errorf("history.md title: %q", strings.SplitN(string(hist), "\n", 2)[0])
	}
	for _, m := range msgs {
		if !strings.Contains(string(hist), m.Content+"\n") {
			t.Errorf("history.md lacks %q", m.Content)
		}
	}
}

// TestAutoTitleNeverOverridesUser: the automatic title (first message) and
// a user's rename race; the user's title must win whichever runs first,
// because "is the title still automatic?" is checked in the rename's own
// transaction.

// TestWriteLockAcrossStores: two stores on one data directory (as two
// processes would be) exclude each other's write transactions, and a
// writer that gives up waiting (its context ends) leaves the lock usable.
func TestWriteLockAcrossStores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ss, err := a.Create(ctx, "locked")
	if err != nil {
		t.Fatal(err)
	}
	tx, end, err := a.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := b.AddFile(short, ss.ID, "x.txt", strings.NewReader("x")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("write while another store holds the lock: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.AddFile(ctx, ss.ID, "y.txt", strings.NewReader("y"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a write went through while the lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	tx.Rollback()
	end()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting writer did not get the lock once it was released")
	}
	if names, err := a.ListFiles(ctx, ss.ID, ""); err != nil || !slices.Equal(names, []string{"y.txt"}) {
		t.Errorf("files %v %v", names, err)
	}
}
