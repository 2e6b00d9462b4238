package cli_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

func plant(t *testing.T, path string, size int, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("z", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Now().Add(-age)
	os.Chtimes(path, mt, mt)
}

// tableRow finds the row of id in a "sessions list" table and returns its
// last columns: messages, context items, session files, folder size.
func tableRow(t *testing.T, out, id string) (messages, items, files int, size string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != id {
			continue
		}
		n := len(f)
		atoi := func(s string) int {
			v, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("column %q in %q", s, line)
			}
			return v
		}
		return atoi(f[n-5]), atoi(f[n-4]), atoi(f[n-3]), f[n-2] + " " + f[n-1]
	}
	t.Fatalf("no row for %s in\n%s", id, out)
	return
}

// TestSessionsListShowsBothCounts (defect 17): a session whose files
// context set has items but which has no session files shows both, under
// headings that say which is which, with its folder's size.
func TestSessionsListShowsBothCounts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, _ := st.Create(ctx, "Spec work")
	st.UpdateContext(ctx, a.ID, "files", []string{"/w/spec.md", "/w/design.md"}, "", session.AddedByUser, nil)
	st.UpdateContext(ctx, a.ID, "ports", []string{"8080"}, "", session.AddedByUser, nil)
	b, _ := st.Create(ctx, "Data crunching")
	st.AddFile(ctx, b.ID, "in.csv", strings.NewReader("a,b\n"))
	st.WriteOutput(ctx, b.ID, "results/charts/q1.csv", []byte(strings.Repeat("q", 3000)))
	os.MkdirAll(filepath.Join(b.Folder, "sources", "a-folder"), 0o700) // not a file
	st.Close()
	env := []string{"CTXLS_DATA_DIR=" + dir}

	out, _, code := run(t, env, "sessions", "list")
	if code != 0 || !strings.Contains(out, "MESSAGES  CONTEXT ITEMS  SESSION FILES  FOLDER SIZE") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if m, items, files, _ := tableRow(t, out, a.ID); m != 0 || items != 3 || files != 0 {
		t.Errorf("%s: messages %d, context items %d, session files %d; want 0, 3, 0\n%s", a.Title, m, items, files, out)
	}
	if _, items, files, size := tableRow(t, out, b.ID); items != 0 || files != 1 || !strings.HasSuffix(size, "KiB") {
		t.Errorf("%s: context items %d, session files %d, size %q; want 0, 1, KiB\n%s", b.Title, items, files, size, out)
	}
	out, _, code = run(t, env, "sessions", "list", "--json")
	var list struct {
		Sessions []struct {
			ID           string
			FileCount    int
			ContextItems int
			FolderSize   int64
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list.Sessions) != 2 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	for _, s := range list.Sessions {
		folder := a.Folder
		items, files := 3, 0
		if s.ID == b.ID {
			folder, items, files = b.Folder, 0, 1
		}
		if s.ContextItems != items || s.FileCount != files || s.FolderSize != session.DirSize(folder) || s.FolderSize == 0 {
			t.Errorf("list --json %+v: want %d items, %d files, %d bytes", s, items, files, session.DirSize(folder))
		}
	}
}

func TestSessionsDu(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := st.Create(context.Background(), "Big one")
	st.Create(context.Background(), "Small one")
	st.Close()
	plant(t, filepath.Join(a.Folder, "data", "dump.bin"), 1500<<10, time.Hour)
	env := []string{"CTXLS_DATA_DIR=" + dir, session.SoftLimitEnv + "=1"}

	type du struct {
		DataDir   string
		Total     int64
		Limit     int64
		OverLimit bool
		Database  int64
		Other     int64
		Sessions  []api.FolderUsage
	}
	get := func(env []string, args ...string) du {
		t.Helper()
		out, errOut, code := run(t, env, append([]string{"sessions", "du", "--json"}, args...)...)
		var u du
		if err := json.Unmarshal([]byte(out), &u); err != nil || code != 0 {
			t.Fatalf("du --json: %d %v\n%s%s", code, err, out, errOut)
		}
		return u
	}
	u := get(env)
	var inSessions int64
	for _, s := range u.Sessions {
		inSessions += s.Size
	}
	if u.Limit != 1<<20 || !u.OverLimit || u.Total <= 1500<<10 || u.Total != u.Database+u.Other+inSessions || u.Database == 0 {
		t.Errorf("du with %s=1: %+v", session.SoftLimitEnv, u)
	}
	if len(u.Sessions) != 2 || u.Sessions[0].ID != a.ID || u.Sessions[0].Size < 1500<<10 {
		t.Errorf("sessions, largest first: %+v", u.Sessions)
	}
	if u := get(env, "--storage-soft-limit-mb", "4"); u.Limit != 4<<20 || u.OverLimit {
		t.Errorf("the flag wins over the environment: %+v", u)
	}
	if u := get([]string{"CTXLS_DATA_DIR=" + dir, session.SoftLimitEnv + "="}); u.Limit != session.DefaultSoftLimitMB<<20 || u.OverLimit {
		t.Errorf("default: %+v", u)
	}
	out, _, code := run(t, env, "sessions", "du")
	for _, want := range []string{"Data directory: " + dir, "of the 1.0 MiB soft limit", "Over the soft limit by", "Big one", "FOLDER SIZE"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("du lacks %q: %d\n%s", want, code, out)
		}
	}
	// du only measures: nothing is removed.
	if _, err := os.Stat(filepath.Join(a.Folder, "data", "dump.bin")); err != nil {
		t.Errorf("du removed a file: %v", err)
	}
	_, errOut, code := run(t, []string{"CTXLS_DATA_DIR=" + dir, session.SoftLimitEnv + "=lots"}, "sessions", "du")
	if code != 2 || !strings.Contains(errOut, session.SoftLimitEnv) {
		t.Errorf("bad %s: %d %q", session.SoftLimitEnv, code, errOut)
	}
	_, errOut, code = run(t, []string{"CTXLS_DATA_DIR=" + dir}, "sessions", "du", "--storage-soft-limit-mb", "-1")
	if code != 2 || !strings.Contains(errOut, "storage-soft-limit-mb") {
		t.Errorf("negative flag: %d %q", code, errOut)
	}
}

func TestSessionsPrune(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old, _ := st.Create(ctx, "Ancient work")
	mid, _ := st.Create(ctx, "Last week")
	fresh, _ := st.Create(ctx, "Today")
	st.Close()
	// Age the sessions' activity times in the database itself.
	db, err := sql.Open("sqlite", filepath.Join(dir, "ctxls.db"))
	if err != nil {
		t.Fatal(err)
	}
	for id, age := range map[string]time.Duration{old.ID: 100 * 24 * time.Hour, mid.ID: 10 * 24 * time.Hour} {
		if _, err := db.Exec("UPDATE sessions SET updated_at = ? WHERE id = ?", time.Now().Add(-age).UnixMilli(), id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	env := []string{"CTXLS_DATA_DIR=" + dir}
	count := func() int {
		t.Helper()
		out, _, _ := run(t, env, "sessions", "list", "--json")
		var l struct{ Sessions []session.Session }
		json.Unmarshal([]byte(out), &l)
		return len(l.Sessions)
	}

	out, _, code := run(t, env, "sessions", "prune", "--inactive-for", "90d", "--dry-run")
	if code != 0 || !strings.Contains(out, "Would delete "+old.ID) || strings.Contains(out, mid.ID) || !strings.Contains(out, "nothing deleted (--dry-run)") {
		t.Errorf("dry run 90d: %d\n%s", code, out)
	}
	if n := count(); n != 3 {
		t.Errorf("the dry run deleted: %d sessions left", n)
	}
	if _, err := os.Stat(old.Folder); err != nil {
		t.Errorf("the dry run removed a folder: %v", err)
	}
	out, _, code = run(t, env, "sessions", "prune", "--inactive-for", "2w", "--dry-run", "--json")
	var res struct {
		DryRun   bool
		Sessions []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || !res.DryRun || len(res.Sessions) != 1 || res.Sessions[0].ID != old.ID {
		t.Errorf("dry run 2w --json: %v\n%s", err, out)
	}
	out, _, code = run(t, env, "sessions", "prune", "--inactive-for", "1w")
	if code != 0 || !strings.Contains(out, "Deleted "+old.ID) || !strings.Contains(out, "Deleted "+mid.ID) || strings.Contains(out, fresh.ID) || !strings.Contains(out, "Deleted 2 sessions") {
		t.Errorf("prune 1w: %d\n%s", code, out)
	}
	if n := count(); n != 1 {
		t.Errorf("%d sessions left, want 1", n)
	}
	for _, f := range []string{old.Folder, mid.Folder} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("folder %s left: %v", f, err)
		}
	}
	out, _, code = run(t, env, "sessions", "prune", "--inactive-for", "12h")
	if code != 0 || !strings.Contains(out, "No session has been inactive for 12h") {
		t.Errorf("nothing to prune: %d\n%s", code, out)
	}
	for _, args := range [][]string{{}, {"--inactive-for", "0d"}, {"--inactive-for", "soon"}, {"--inactive-for", "-3d"}, {"--inactive-for", "90"}} {
		_, errOut, code := run(t, env, append([]string{"sessions", "prune"}, args...)...)
		if code != 2 || !strings.Contains(errOut, "inactive-for") {
			t.Errorf("prune %v: %d %q", args, code, errOut)
		}
	}
	if n := count(); n != 1 {
		t.Errorf("a refused prune deleted: %d left", n)
	}
}

// TestChatReportsWritesAndCleanUp: "ctxls chat" says on stderr what the
// model wrote and what the storage clean-up removed after the turn.
func TestChatReportsWritesAndCleanUp(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	dir := t.TempDir()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := st.Create(context.Background(), "Crunch")
	st.Close()
	oldest := filepath.Join(a.Folder, "data", "scratch-1.bin")
	plant(t, oldest, 700<<10, 3*time.Hour)
	newer := filepath.Join(a.Folder, "data", "scratch-2.bin")
	plant(t, newer, 100<<10, 2*time.Hour)
	env := []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY=", session.SoftLimitEnv + "=1"}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"results/summary.md","content":"` + strings.Repeat("s", 400<<10) + `"}`}}},
		openaitest.Reply{Chunks: []string{"Summarised."}},
	)
	out, errOut, code := run(t, env, "chat", "--session", a.ID, "summarise")
	if code != 0 || out != "Summarised.\n" {
		t.Fatalf("chat: %d %q %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "[wrote results/summary.md, 409,600 bytes]") {
		t.Errorf("stderr does not report the write: %q", errOut)
	}
	if !strings.Contains(errOut, "1 intermediate file") || !strings.Contains(errOut, `"Crunch" data/scratch-1.bin`) || strings.Contains(errOut, "scratch-2") {
		t.Errorf("stderr does not report the clean-up: %q", errOut)
	}
	if _, err := os.Stat(oldest); !os.IsNotExist(err) {
		t.Errorf("the oldest data file is still there: %v", err)
	}
	for _, p := range []string{newer, filepath.Join(a.Folder, "results", "summary.md")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
