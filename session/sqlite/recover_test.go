package sqlite

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

// halfRename leaves the state a process killed inside Rename leaves: the
// folder moved to the new title's name, the database still naming the old
// one. It returns the new name.
func halfRename(t *testing.T, s *Store, ss *session.Session, title string) string {
	t.Helper()
	moved := session.FolderName(ss.CreatedAt, title, ss.ID)
	if err := os.Rename(ss.Folder, s.folderPath(moved)); err != nil {
		t.Fatal(err)
	}
	return moved
}

// sessionDirs lists sessions/.
func sessionDirs(t *testing.T, s *Store) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestHalfRenamedFolderMovedBackOnOpen: a rename killed between moving the
// folder and committing the title (found by lsp's TestCrashRandomKills) is
// undone when the store opens: the folder is back under the name the
// database records, with its files, and nothing else is in sessions/.
func TestHalfRenamedFolderMovedBackOnOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := s.Create(ctx, "Old title")
	other, _ := s.Create(ctx, "Another")
	if _, err := s.AddFile(ctx, ss.ID, "notes.txt", strings.NewReader("kept")); err != nil {
		t.Fatal(err)
	}
	halfRename(t, s, ss, "New title")
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(ctx, ss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "Old title" || got.Folder != ss.Folder || got.FileCount != 1 {
		t.Errorf("after the reopen: %+v", got)
	}
	if data, err := os.ReadFile(filepath.Join(ss.Folder, "sources", "notes.txt")); string(data) != "kept" {
		t.Errorf("the file: %q %v", data, err)
	}
	want := []string{filepath.Base(ss.Folder), filepath.Base(other.Folder)}
	slices.Sort(want)
	if got := sessionDirs(t, s); !slices.Equal(got, want) {
		t.Errorf("sessions/ holds %v, want %v", got, want)
	}
}

// TestHalfRenamedFolderFoundByLiveWriters: a store that is already open (a
// second daemon) finds the folder another process's killed rename moved:
// messages, files and renames keep working, and no second folder appears
// under the old name beside the one holding the files.
func TestHalfRenamedFolderFoundByLiveWriters(t *testing.T) {
	t.Parallel()
	for _, op := range []string{"message", "file", "rename", "export"} {
		t.Run(op, func(t *testing.T) {
			s := openTest(t)
			ss, _ := s.Create(ctx, "Old title")
			if _, err := s.AddFile(ctx, ss.ID, "notes.txt", strings.NewReader("kept")); err != nil {
				t.Fatal(err)
			}
			halfRename(t, s, ss, "New title")
			var err error
			folder := ss.Folder
			switch op {
			case "message":
				// The message's history.md write is what touches the folder.
				err = s.AppendMessage(ctx, &session.Message{SessionID: ss.ID, Role: session.RoleUser, Content: "hello"})
				if err == nil {
					err = s.FlushHistory()
				}
			case "file":
				_, err = s.AddFile(ctx, ss.ID, "more.txt", strings.NewReader("more"))
			case "rename":
				var got *session.Session
				got, err = s.Rename(ctx, ss.ID, "Third title", session.TitleUser)
				if err == nil {
					folder = got.Folder
				}
			case "export":
				_, _, err = s.Export(ctx, ss.ID, "markdown")
			}
			if err != nil {
				t.Fatalf("%s after a half-done rename: %v", op, err)
			}
			if got := sessionDirs(t, s); !slices.Equal(got, []string{filepath.Base(folder)}) {
				t.Errorf("sessions/ holds %v, want only %s", got, filepath.Base(folder))
			}
			if data, err := os.ReadFile(filepath.Join(folder, "sources", "notes.txt")); string(data) != "kept" {
				t.Errorf("the file: %q %v", data, err)
			}
		})
	}
}

// TestHalfCreatedFolderRemovedOnOpen: a folder a Create killed before its
// commit left (empty subfolders, maybe history.md) is removed when the
// store opens; a folder nobody names that holds files is left alone, and
// so is anything that is not named like a session folder.
func TestHalfCreatedFolderRemovedOnOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := s.Create(ctx, "Real")
	now := time.Now()
	empty := s.folderPath(session.FolderName(now, "New session", session.NewID()))
	withFile := s.folderPath(session.FolderName(now, "Has a file", session.NewID()))
	foreign := s.folderPath("my-notes")
	for _, f := range []string{empty, withFile, foreign} {
		for _, d := range session.Subdirs {
			if err := os.MkdirAll(filepath.Join(f, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.WriteFile(filepath.Join(empty, "history.md"), []byte("# New session\n"), 0o600)
	os.WriteFile(filepath.Join(withFile, "sources", "a.txt"), []byte("data"), 0o600)
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []string{filepath.Base(ss.Folder), filepath.Base(withFile), "my-notes"}
	slices.Sort(want)
	if got := sessionDirs(t, s); !slices.Equal(got, want) {
		t.Errorf("sessions/ holds %v, want %v", got, want)
	}
}

// TestStaleUploadsRemovedOnOpen: an upload a killed process left in tmp/ is
// removed once it has not been written for session.StaleUpload; a recent one (an
// upload another process is writing) is kept.
func TestStaleUploadsRemovedOnOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	stale := filepath.Join(dir, "tmp", ".upload-stale")
	fresh := filepath.Join(dir, "tmp", ".upload-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-session.StaleUpload - time.Minute)
	os.Chtimes(stale, old, old)
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale upload: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh upload: %v", err)
	}
}
