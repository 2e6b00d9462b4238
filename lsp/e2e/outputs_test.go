package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// startChatBinary starts the built binary over real stdio with the fake
// provider configured in initializationOptions (merged with init), and
// returns it with its workspace folder and data directory. env and args go
// to the process.
func startChatBinary(t *testing.T, fake *openaitest.Server, init map[string]any, env []string, args ...string) (*lsptest.Server, string, string) {
	t.Helper()
	root, rootURI := workspace(t)
	dataDir := t.TempDir()
	env = append([]string{"OPENAI_API_KEY=sk-test-not-real", session.SoftLimitEnv + "="}, env...)
	s := lsptest.Binary(t, env, append([]string{"serve", "--data-dir", dataDir}, args...)...)
	opts := map[string]any{"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000}}
	for k, v := range init {
		opts[k] = v
	}
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: opts})
	return s, root, dataDir
}

// filesChanged decodes every ctxls/sessionFilesChanged received so far.
func filesChanged(t *testing.T, s *lsptest.Server) []api.SessionFilesChangedParams {
	t.Helper()
	var out []api.SessionFilesChangedParams
	for _, m := range s.Notifications(api.SessionFilesChanged) {
		var p api.SessionFilesChangedParams
		mustUnmarshal(t, m.Params, &p)
		out = append(out, p)
	}
	return out
}

func call(id, name, args string) openaitest.ToolCall {
	return openaitest.ToolCall{ID: id, Name: name, Arguments: args}
}

func writeCall(id, path, content string) openaitest.ToolCall {
	b, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return call(id, "write_file", string(b))
}

// TestWriteFileTool: over the built binary, the model writes into
// results/ (a bare name too), scripts/ and data/ with folders below, is
// refused everything else (.., absolute paths, sources/, NUL, hidden names,
// a symlinked folder, other folders, over 25 MiB), is told when it replaces
// a file, and every write is announced with ctxls/sessionFilesChanged by
// "model".
func TestWriteFileTool(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	s, _, _ := startChatBinary(t, fake, nil, nil)
	// A turn of three rounds and fifteen tool calls, each write synced to
	// disk: 15 s was not always enough on a loaded 2-core machine under -race.
	s.SetTimeout(60 * time.Second)
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "outputs"}, &created)
	id, folder := created.Session.ID, created.Session.Folder
	s.MustCommand(api.FilesAdd, map[string]any{"sessionId": id, "name": "data.csv", "contentBase64": base64.StdEncoding.EncodeToString([]byte("a,b\n"))}, nil)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(folder, "results", "escape")); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(outside, "abs.txt")

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			writeCall("w1", "report.md", "# Report\n"),
			writeCall("w2", "results/charts/q1.csv", "q,v\n1,2\n"),
			writeCall("w3", "scripts/clean.py", "print('clean')\n"),
			writeCall("w4", "data/raw/page.html", "<html></html>"),
			writeCall("r1", "../evil.txt", "x"),
			writeCall("r2", abs, "x"),
			writeCall("r3", "sources/data.csv", "overwritten"),
			writeCall("r4", "results/nul\x00.txt", "x"),
			writeCall("r5", ".hidden", "x"),
			writeCall("r6", "results/.git/config", "x"),
			writeCall("r7", "results/escape/pwned.txt", "x"),
			writeCall("r8", "notes/x.txt", "x"),
			writeCall("r9", "results/../../../evil.txt", "x"),
			call("r10", "write_file", `{"path":"results/no-content.txt"}`),
		}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			writeCall("w5", "results/report.md", "# Report, second version\n"),
			call("l1", "list_session_files", `{"subdir":"results"}`),
		}},
		openaitest.Reply{Chunks: []string{"Written."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"sessionId": id, "message": "write your outputs"}, &res)
	if res.Text != "Written." {
		t.Fatalf("turn: %+v", res)
	}
	reqs := fake.WaitRequests(3, 10*time.Second)
	first, second := reqs[1].ToolResults(), reqs[2].ToolResults()
	for id, want := range map[string]string{
		"w1": "created results/report.md (9 bytes)",
		"w2": "created results/charts/q1.csv (8 bytes)",
		"w3": "created scripts/clean.py (15 bytes)",
		"w4": "created data/raw/page.html (13 bytes)",
	} {
		if first[id] != want {
			t.Errorf("%s: %q, want %q", id, first[id], want)
		}
	}
	if want := "replaced the existing file results/report.md (25 bytes)"; second["w5"] != want {
		t.Errorf("w5: %q, want %q", second["w5"], want)
	}
	for id, want := range map[string]string{
		"r1": `must not contain ".."`, "r2": "is absolute", "r3": "read-only", "r4": "NUL",
		"r5": "starts with a dot", "r6": "starts with a dot", "r7": "symbolic link",
		"r8": "must start with results/, scripts/ or data/", "r9": `must not contain ".."`, "r10": "content is required",
	} {
		if !strings.HasPrefix(first[id], "error: ") || !strings.Contains(first[id], want) {
			t.Errorf("%s: %q, want an error mentioning %q", id, first[id], want)
		}
	}
	if want := `["charts/q1.csv","report.md"]`; second["l1"] != want {
		t.Errorf("list_session_files results: %s, want %s", second["l1"], want)
	}
	for rel, want := range map[string]string{
		"results/report.md": "# Report, second version\n", "results/charts/q1.csv": "q,v\n1,2\n",
		"scripts/clean.py": "print('clean')\n", "data/raw/page.html": "<html></html>", "sources/data.csv": "a,b\n",
	} {
		if b, err := os.ReadFile(filepath.Join(folder, rel)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", rel, b, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the session folder: %v", entries)
	}
	for _, p := range []string{filepath.Join(folder, "evil.txt"), filepath.Join(filepath.Dir(folder), "evil.txt"), filepath.Join(folder, ".hidden"),
		filepath.Join(folder, "results", ".hidden"), filepath.Join(folder, "results", ".git"), filepath.Join(folder, "notes")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// Notifications: the user's add, then each model write in order.
	want := []api.SessionFilesChangedParams{
		{SessionID: id, Subdir: "sources", Name: "data.csv", Size: 4, By: "user"},
		{SessionID: id, Subdir: "results", Name: "report.md", Size: 9, By: "model"},
		{SessionID: id, Subdir: "results", Name: "charts/q1.csv", Size: 8, By: "model"},
		{SessionID: id, Subdir: "scripts", Name: "clean.py", Size: 15, By: "model"},
		{SessionID: id, Subdir: "data", Name: "raw/page.html", Size: 13, By: "model"},
		{SessionID: id, Subdir: "results", Name: "report.md", Size: 25, By: "model"},
	}
	if got := filesChanged(t, s); !slices.Equal(got, want) {
		t.Errorf("sessionFilesChanged:\n got %+v\nwant %+v", got, want)
	}
	// What is stored of the calls names the files but does not hold their
	// content a second time (the database, history.md).
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	stored := ""
	for _, m := range show.Messages {
		stored += string(m.ToolCalls)
	}
	if !strings.Contains(stored, `results/charts/q1.csv`) || !strings.Contains(stored, `[8 bytes, not stored here: see the file]`) || strings.Contains(stored, "q,v") {
		t.Errorf("stored tool calls: %s", stored)
	}
	// The files list and the editor's view agree with the disk.
	var files api.FilesListResult
	s.MustCommand(api.FilesList, map[string]any{"sessionId": id, "subdir": "data"}, &files)
	if !slices.Equal(files.Files, []string{"raw/page.html"}) {
		t.Errorf("files.list data: %v", files.Files)
	}

	// Over 25 MiB: refused with both sizes, nothing written, no notification.
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{writeCall("big", "data/big.bin", strings.Repeat("x", session.MaxFileSize+1))}},
		openaitest.Reply{Chunks: []string{"Too big."}},
	)
	n := len(fake.Requests())
	s.MustCommand(api.Chat, map[string]any{"sessionId": id, "message": "write a big file"}, &res)
	reqs = fake.WaitRequests(n+2, 20*time.Second)
	got := reqs[n+1].ToolResults()["big"]
	if !strings.HasPrefix(got, "error: ") || !strings.Contains(got, "data/big.bin would be 26,214,401 bytes; the limit is 26,214,400 bytes (25 MiB)") {
		t.Errorf("too large: %.200q", got)
	}
	if _, err := os.Lstat(filepath.Join(folder, "data", "big.bin")); err == nil {
		t.Error("the too-large file was written")
	}
	if got := len(filesChanged(t, s)); got != len(want) {
		t.Errorf("%d notifications after a refused write, want %d", got, len(want))
	}
}

// TestSessionFilesListing: over the built binary, a folder in sources/ is
// not a file: not listed, not counted in fileCount, not offered in the
// prompt; files in folders below results/ are listed as sub/name; adding
// and removing a file announce it by "user"; a 27,000,000-byte file is
// refused with its exact size.
func TestSessionFilesListing(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	s, root, _ := startChatBinary(t, fake, nil, nil)
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "listing"}, &created)
	id, folder := created.Session.ID, created.Session.Folder
	var added api.FilesAddResult
	s.MustCommand(api.FilesAdd, map[string]any{"path": "docs/spec.md"}, &added)
	s.MustCommand(api.FilesAdd, map[string]any{"name": "notes.txt", "contentBase64": base64.StdEncoding.EncodeToString([]byte("hello"))}, nil)
	s.MustCommand(api.FilesAdd, map[string]any{"name": "gone.txt", "contentBase64": base64.StdEncoding.EncodeToString([]byte("bye"))}, nil)
	s.MustCommand(api.FilesRemove, map[string]any{"name": "gone.txt"}, nil)
	if err := os.MkdirAll(filepath.Join(folder, "sources", "subfolder", "deeper"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(folder, "sources", "subfolder", "inside.txt"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(folder, "results", "charts", "2026"), 0o700)
	os.WriteFile(filepath.Join(folder, "results", "charts", "2026", "q1.csv"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(folder, "results", "summary.md"), []byte("x"), 0o600)

	wantNotes := []api.SessionFilesChangedParams{
		{SessionID: id, Subdir: "sources", Name: "spec.md", Size: 5, By: "user"},
		{SessionID: id, Subdir: "sources", Name: "notes.txt", Size: 5, By: "user"},
		{SessionID: id, Subdir: "sources", Name: "gone.txt", Size: 3, By: "user"},
		{SessionID: id, Subdir: "sources", Name: "gone.txt", Size: 0, By: "user", Removed: true},
	}
	if got := filesChanged(t, s); !slices.Equal(got, wantNotes) {
		t.Errorf("sessionFilesChanged:\n got %+v\nwant %+v", got, wantNotes)
	}
	var files api.FilesListResult
	s.MustCommand(api.FilesList, map[string]any{}, &files)
	if !slices.Equal(files.Files, []string{"notes.txt", "spec.md"}) {
		t.Errorf("files.list sources: %v", files.Files)
	}
	s.MustCommand(api.FilesList, map[string]any{"subdir": "results"}, &files)
	if !slices.Equal(files.Files, []string{"charts/2026/q1.csv", "summary.md"}) {
		t.Errorf("files.list results: %v", files.Files)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if show.Session.FileCount != 2 || len(list.Sessions) != 1 || list.Sessions[0].FileCount != 2 {
		t.Errorf("fileCount: show %d, list %+v; want 2", show.Session.FileCount, list.Sessions)
	}

	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("l1", "list_session_files", `{}`), call("l2", "list_session_files", `{"subdir":"results"}`)}},
		openaitest.Reply{Chunks: []string{"Listed."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "what do I have?"}, nil)
	reqs := fake.WaitRequests(2, 10*time.Second)
	sys := reqs[0].ModelContext()
	if !strings.Contains(sys, "\n- notes.txt\n- spec.md\n\n") || strings.Contains(sys, "subfolder") {
		t.Errorf("the prompt's session files:\n%s", sys)
	}
	got := reqs[1].ToolResults()
	if got["l1"] != `["notes.txt","spec.md"]` || got["l2"] != `["charts/2026/q1.csv","summary.md"]` {
		t.Errorf("list_session_files: %q", got)
	}

	// Defect 3: the exact size, not "25 MB; the limit is 25 MB".
	big := filepath.Join(root, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(27_000_000)
	f.Close()
	err = s.Command(api.FilesAdd, map[string]any{"path": "big.bin"}, nil)
	checkRPCError(t, "files.add of 27,000,000 bytes", err, -32602, big+" is 27,000,000 bytes; the limit is 26,214,400 bytes (25 MiB)")
}

// TestGetRelevantContextTool (defect 11): no context at all is said in
// words, an unknown set is [], a known set is its items.
func TestGetRelevantContextTool(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	s, _, _ := startChatBinary(t, fake, nil, nil)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{call("all", "get_relevant_context", `{}`), call("one", "get_relevant_context", `{"setName":"ports"}`)}},
		openaitest.Reply{Chunks: []string{"Nothing yet."}},
	)
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "what do you remember?"}, &res)
	got := fake.WaitRequests(2, 10*time.Second)[1].ToolResults()
	if got["all"] != "No context stored for this session" || got["one"] != "[]" {
		t.Errorf("empty context: %q", got)
	}
	// The first complete answer sends the title request in the background:
	// let it take the default reply before the next turn's are queued.
	waitTitle(t, s, "A title", "model")
	s.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"8080", "5432"}}, nil)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			call("all", "get_relevant_context", `{}`), call("known", "get_relevant_context", `{"setName":"ports"}`),
			call("unknown", "get_relevant_context", `{"setName":"x"}`)}},
		openaitest.Reply{Chunks: []string{"Ports."}},
	)
	n := len(fake.Requests())
	s.MustCommand(api.Chat, map[string]any{"message": "and now?"}, &res)
	got = fake.WaitRequests(n+2, 10*time.Second)[n+1].ToolResults()
	if got["all"] != `{"ports":["8080","5432"]}` || got["known"] != `["8080","5432"]` || got["unknown"] != "[]" {
		t.Errorf("with context: %q", got)
	}
}

// dataFile plants a file of size bytes in a session folder, modified age ago.
func dataFile(t *testing.T, folder, rel string, size int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(folder, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("d", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Now().Add(-age)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	return p
}

// dataName is "data/sub/name" for a file in a session's data/.
func dataName(p string) string {
	_, rel, _ := strings.Cut(filepath.ToSlash(p), "/data/")
	return "data/" + rel
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// checkCleanup checks a clean-up against the soft limit: the files removed
// are exactly the oldest ones of data (in age order), at least one; the data
// directory is now under limit and would not be without the last removal;
// keep all still exist; the showMessage names every removed file.
func checkCleanup(t *testing.T, msg, dataDir string, limit int64, data []string, sizes []int64, keep []string) {
	t.Helper()
	k := 0
	for k < len(data) && !exists(data[k]) {
		k++
	}
	if k == 0 {
		t.Fatalf("nothing removed; showMessage %s", msg)
	}
	for i := k; i < len(data); i++ {
		if !exists(data[i]) {
			t.Errorf("%s removed before an older file was kept", data[i])
		}
	}
	// history.md is rewritten in the background (100 ms after a message
	// change) and may land after the clean-up: allow it some room.
	const slack = 32 << 10
	used := session.DirSize(dataDir)
	if used > limit+slack || used+sizes[k-1] <= limit {
		t.Errorf("%d bytes used after removing %d files: limit %d, last file %d bytes", used, k, limit, sizes[k-1])
	}
	for _, p := range keep {
		if !exists(p) {
			t.Errorf("%s removed; only data/ files may be", p)
		}
	}
	if !strings.Contains(msg, fmt.Sprintf("%d intermediate file", k)) {
		t.Errorf("showMessage does not count %d files: %s", k, msg)
	}
	for _, p := range data[:k] {
		if !strings.Contains(msg, dataName(p)) {
			t.Errorf("showMessage does not name %s: %s", p, msg)
		}
	}
	for _, p := range data[k:] {
		if strings.Contains(msg, dataName(p)) {
			t.Errorf("showMessage names %s, which was kept: %s", p, msg)
		}
	}
}

// TestStorageSoftLimit: with --storage-soft-limit-mb 2, over the built
// binary, a resume, a turn and a write_file that leave the data directory
// over 2 MiB remove files from data/ folders (of any session), oldest
// first, just enough; sources/, results/, scripts/ and messages stay; the
// user is told with window/showMessage naming the files.
func TestStorageSoftLimit(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"A title"}}))
	s, _, dataDir := startChatBinary(t, fake, nil, nil, "--storage-soft-limit-mb", "2")
	const limit, kb = 2 << 20, 1 << 10
	var a, b api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "alpha"}, &a)
	s.MustCommand(api.SessionNew, map[string]any{"title": "beta"}, &b)
	s.MustCommand(api.FilesAdd, map[string]any{"sessionId": a.Session.ID, "name": "input.csv", "contentBase64": base64.StdEncoding.EncodeToString([]byte(strings.Repeat("s", 200*kb)))}, nil)
	keep := []string{
		filepath.Join(a.Session.Folder, "sources", "input.csv"),
		dataFile(t, a.Session.Folder, "results/report.md", 200*kb, 1000*time.Hour),
		dataFile(t, b.Session.Folder, "scripts/job.py", 100*kb, 1000*time.Hour),
	}
	data := []string{
		dataFile(t, b.Session.Folder, "data/d1-oldest.json", 600*kb, 50*time.Hour),
		dataFile(t, a.Session.Folder, "data/sub/d2.json", 600*kb, 40*time.Hour),
		dataFile(t, b.Session.Folder, "data/d3.json", 600*kb, 30*time.Hour),
		dataFile(t, a.Session.Folder, "data/d4-newest.json", 600*kb, 20*time.Hour),
	}
	sizes := []int64{600 * kb, 600 * kb, 600 * kb, 600 * kb}
	if session.DirSize(dataDir) <= limit {
		t.Fatalf("the setup is not over the limit: %d", session.DirSize(dataDir))
	}

	// 1. On resume.
	s.MustCommand(api.SessionResume, map[string]any{"sessionId": a.Session.ID}, nil)
	msg := s.WaitNotification("window/showMessage", 1)
	checkCleanup(t, string(msg.Params), dataDir, limit, data, sizes, keep)
	if !strings.Contains(string(msg.Params), `\"beta\" data/d1-oldest.json`) {
		t.Errorf("the message does not say which session: %s", msg.Params)
	}

	// 2. After a turn.
	left := []string{}
	leftSizes := []int64{}
	for i, p := range data {
		if exists(p) {
			left, leftSizes = append(left, p), append(leftSizes, sizes[i])
		}
	}
	more := []string{
		dataFile(t, b.Session.Folder, "data/e1.json", 500*kb, 100*time.Hour),
		dataFile(t, a.Session.Folder, "data/e2.json", 500*kb, 90*time.Hour),
	}
	data = append(more, left...)
	sizes = append([]int64{500 * kb, 500 * kb}, leftSizes...)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"an answer"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "hello"}, &res)
	msg = s.WaitNotification("window/showMessage", 2)
	checkCleanup(t, string(msg.Params), dataDir, limit, data, sizes, keep)
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": a.Session.ID}, &show)
	if len(show.Messages) != 2 || show.Messages[1].Content != "an answer" {
		t.Errorf("messages after the clean-up: %+v", show.Messages)
	}

	// 3. After write_file, from a known state: one old data/ file and room
	// for the model's new one only without it. The new file is the newest,
	// so the old one goes and the new one stays.
	for _, p := range data {
		os.Remove(p)
	}
	old := dataFile(t, b.Session.Folder, "data/old.json", 400*kb, 10*time.Hour)
	if used := session.DirSize(dataDir); used > limit-500*kb {
		t.Fatalf("no room for the last step: %d bytes used", used)
	}
	// Over the limit by 100 KiB even once the clean-up has emptied the
	// write-ahead log; 300 KiB under once old.json is gone.
	var wal int64
	if fi, err := os.Stat(filepath.Join(dataDir, "ctxls.db-wal")); err == nil {
		wal = fi.Size()
	}
	fresh := strings.Repeat("f", int(limit-session.DirSize(dataDir)+wal+100*kb))
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{writeCall("w", "data/fresh.json", fresh)}},
		openaitest.Reply{Chunks: []string{"wrote it"}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "write data"}, &res)
	msg = s.WaitNotification("window/showMessage", 3)
	if exists(old) || !strings.Contains(string(msg.Params), `\"beta\" data/old.json`) || strings.Contains(string(msg.Params), "fresh.json") {
		t.Errorf("after write_file: old.json kept %v; %s", exists(old), msg.Params)
	}
	if p := filepath.Join(a.Session.Folder, "data", "fresh.json"); !exists(p) {
		t.Errorf("the model's new file was removed")
	}
	if n := len(s.Notifications("window/showMessage")); n != 3 {
		t.Errorf("%d showMessages, want 3", n)
	}
	for _, p := range keep {
		if !exists(p) {
			t.Errorf("%s removed", p)
		}
	}
}

// TestStorageSoftLimitSettings: the limit comes from initializationOptions
// and settings (the editor's, which win over the command line), else the
// flag, else CTXLS_STORAGE_SOFT_LIMIT_MB, else 1024 MiB.
func TestStorageSoftLimitSettings(t *testing.T) {
	parallel(t, waitTests)
	overfill := func(t *testing.T, folder string) string {
		return dataFile(t, folder, fmt.Sprintf("data/fill-%d.bin", time.Now().UnixNano()), 1500<<10, time.Hour)
	}
	resume := func(s *lsptest.Server, id string) int {
		s.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, nil)
		n := 0
		for _, m := range s.Notifications("window/showMessage") {
			if strings.Contains(string(m.Params), "soft limit") {
				n++
			}
		}
		return n
	}
	fake := openaitest.New(t)

	t.Run("initializationOptions and settings", func(t *testing.T) {
		s, _, _ := startChatBinary(t, fake, map[string]any{"storageSoftLimitMB": 1}, nil)
		var a api.SessionResult
		s.MustCommand(api.SessionNew, map[string]any{}, &a)
		f := overfill(t, a.Session.Folder)
		if n := resume(s, a.Session.ID); n != 1 || exists(f) {
			t.Fatalf("initializationOptions.storageSoftLimitMB 1: %d clean-ups, file kept %v", n, exists(f))
		}
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"storageSoftLimitMB": 1024}}})
		f = overfill(t, a.Session.Folder)
		if n := resume(s, a.Session.ID); n != 1 || !exists(f) {
			t.Errorf("settings 1024: %d clean-ups, file kept %v", n, exists(f))
		}
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"storageSoftLimitMB": -3}}})
		s.WaitFor("the bad setting's warning", func(m *lsptest.Message) bool {
			return m.Method == "window/showMessage" && strings.Contains(string(m.Params), "storageSoftLimitMB is -3")
		})
		if n := resume(s, a.Session.ID); n != 1 || !exists(f) {
			t.Errorf("a bad setting changed the limit: %d clean-ups", n)
		}
		s.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"ctxls": map[string]any{"storageSoftLimitMB": 1}}})
		if n := resume(s, a.Session.ID); n != 2 || exists(f) {
			t.Errorf("settings 1: %d clean-ups, file kept %v", n, exists(f))
		}
	})
	t.Run("the editor's value wins over the flag", func(t *testing.T) {
		s, _, _ := startChatBinary(t, fake, map[string]any{"storageSoftLimitMB": 1024}, nil, "--storage-soft-limit-mb", "1")
		var a api.SessionResult
		s.MustCommand(api.SessionNew, map[string]any{}, &a)
		f := overfill(t, a.Session.Folder)
		if n := resume(s, a.Session.ID); n != 0 || !exists(f) {
			t.Errorf("%d clean-ups, file kept %v", n, exists(f))
		}
	})
	t.Run("environment", func(t *testing.T) {
		s, _, _ := startChatBinary(t, fake, nil, []string{session.SoftLimitEnv + "=1"})
		var a api.SessionResult
		s.MustCommand(api.SessionNew, map[string]any{}, &a)
		f := overfill(t, a.Session.Folder)
		if n := resume(s, a.Session.ID); n != 1 || exists(f) {
			t.Errorf("%s=1: %d clean-ups, file kept %v", session.SoftLimitEnv, n, exists(f))
		}
	})
	t.Run("default 1024 MiB", func(t *testing.T) {
		s, _, _ := startChatBinary(t, fake, nil, nil)
		var a api.SessionResult
		s.MustCommand(api.SessionNew, map[string]any{}, &a)
		f := overfill(t, a.Session.Folder)
		if n := resume(s, a.Session.ID); n != 0 || !exists(f) {
			t.Errorf("%d clean-ups, file kept %v", n, exists(f))
		}
	})
	t.Run("resumed at start by initializationOptions.session", func(t *testing.T) {
		dataDir := t.TempDir()
		st, err := backend.Open(context.Background(), dataDir, "")
		if err != nil {
			t.Fatal(err)
		}
		a, _ := st.Create(context.Background(), "resumed at start")
		st.Close()
		f := overfill(t, a.Folder)
		s := lsptest.Binary(t, []string{session.SoftLimitEnv + "="}, "serve", "--data-dir", dataDir, "--storage-soft-limit-mb", "1")
		s.Initialize(lsptest.InitOptions{InitOptions: map[string]any{"session": a.ID}})
		msg := s.WaitFor("the clean-up's message", func(m *lsptest.Message) bool {
			return m.Method == "window/showMessage" && strings.Contains(string(m.Params), "soft limit")
		})
		if exists(f) || !strings.Contains(string(msg.Params), dataName(f)) {
			t.Errorf("file kept %v; %s", exists(f), msg.Params)
		}
	})
	t.Run("bad values", func(t *testing.T) {
		s := lsptest.Binary(t, []string{session.SoftLimitEnv + "=lots"}, "serve", "--data-dir", t.TempDir())
		if code := s.Exit(); code != 2 || !strings.Contains(s.Stderr(), session.SoftLimitEnv) {
			t.Errorf("a bad %s: exit %d, stderr %q", session.SoftLimitEnv, code, s.Stderr())
		}
		s = lsptest.Binary(t, nil, "serve", "--data-dir", t.TempDir())
		err := s.Call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"storageSoftLimitMB": -1}}, nil)
		checkRPCError(t, "initialize with a negative limit", err, -32602, "storageSoftLimitMB")
	})
}
