package e2e_test

import (
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
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/service"
)

// workspace makes a workspace folder with a few files and returns its path
// and file:// URI.
func workspace(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	for name, text := range map[string]string{
		"main.go":      "package main\n",
		"README.md":    "# app\n",
		"docs/spec.md": "spec\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, "file://" + root
}

func startWithRoot(t *testing.T) (*lsptest.Server, string) {
	t.Helper()
	root, rootURI := workspace(t)
	s := lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
	s.Initialize(lsptest.InitOptions{RootURI: rootURI})
	return s, root
}

// startBinaryWithRoot is startWithRoot with the built binary over real stdio.
func startBinaryWithRoot(t *testing.T) (*lsptest.Server, string) {
	t.Helper()
	root, rootURI := workspace(t)
	s := lsptest.Binary(t, nil, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI})
	return s, root
}

// bothTransports runs a test in process over pipes and against the built
// binary over real stdio.
func bothTransports(t *testing.T, test func(t *testing.T, start func(*testing.T) (*lsptest.Server, string))) {
	t.Run("pipe", func(t *testing.T) { test(t, startWithRoot) })
	t.Run("stdio", func(t *testing.T) { test(t, startBinaryWithRoot) })
}

// TestSessionCommands walks every command through its normal use.
func TestSessionCommands(t *testing.T) { bothTransports(t, testSessionCommands) }

func testSessionCommands(t *testing.T, start func(*testing.T) (*lsptest.Server, string)) {
	s, root := start(t)

	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "Fix login redirect"}, &created)
	id := created.Session.ID
	if created.V != 1 || created.Session.Title != "Fix login redirect" || created.Session.TitleSource != "user" || len(id) < 20 {
		t.Fatalf("new: %+v", created)
	}
	if fi, err := os.Stat(filepath.Join(created.Session.Folder, "sources")); err != nil || !fi.IsDir() {
		t.Fatalf("session folder: %v", err)
	}

	// files items: relative, file:// URI and absolute all stored absolute.
	var set api.ContextSetResult
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"main.go", "file://" + root + "/README.md", root + "/docs/../docs/spec.md"}}, &set)
	want := []string{root + "/main.go", root + "/README.md", root + "/docs/spec.md"}
	if !slices.Equal(set.Items, want) || len(set.Warnings) != 0 {
		t.Fatalf("set files: %+v, want %v", set, want)
	}
	changed := s.WaitNotification(api.ContextChanged, 1)
	var cc api.ContextChangedParams
	mustUnmarshal(t, changed.Params, &cc)
	if cc.SessionID != id || cc.Reason != "changed" || !slices.Equal(cc.Added, want) || len(cc.Removed) != 0 {
		t.Errorf("contextChanged: %+v", cc)
	}

	// merge keeps order and drops duplicates; unknown names warn.
	s.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"8080"}}, &set)
	s.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"5432", "8080"}, "mode": "merge"}, &set)
	if !slices.Equal(set.Items, []string{"8080", "5432"}) {
		t.Errorf("merge: %v", set.Items)
	}
	s.MustCommand(api.ContextSet, map[string]any{"setName": "fles", "items": []string{"x"}}, &set)
	if len(set.Warnings) != 1 || !strings.Contains(set.Warnings[0], `unknown set name "fles"`) {
		t.Errorf("warnings: %v", set.Warnings)
	}
	// An empty replace deletes the set.
	s.MustCommand(api.ContextSet, map[string]any{"setName": "fles", "items": []string{}}, &set)
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if _, ok := got.Context["fles"]; ok || len(got.Context) != 2 {
		t.Errorf("context after delete: %v", got.Context)
	}
	got = api.ContextGetResult{}
	s.MustCommand(api.ContextGet, map[string]any{"setName": "ports"}, &got)
	if len(got.Context) != 1 || !slices.Equal(got.Context["ports"], []string{"8080", "5432"}) {
		t.Errorf("get ports: %v", got.Context)
	}

	// Limits: 11 items in one set, then more than 50 in all; nothing changes.
	var eleven []string
	for i := range 11 {
		eleven = append(eleven, fmt.Sprint(i))
	}
	err := s.Command(api.ContextSet, map[string]any{"setName": "endpoints", "items": eleven}, nil)
	if rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "10") || !strings.Contains(err.Error(), "11") {
		t.Errorf("11 items: %v", err)
	}
	for i := range 4 {
		var ten []string
		for j := range 10 {
			ten = append(ten, fmt.Sprintf("s%d-%d", i, j))
		}
		s.MustCommand(api.ContextSet, map[string]any{"setName": fmt.Sprintf("set%d", i), "items": ten}, nil)
	}
	// 3 files + 2 ports + 40 = 45; 6 more is 51.
	err = s.Command(api.ContextSet, map[string]any{"setName": "endpoints", "items": []string{"a", "b", "c", "d", "e", "f"}}, nil)
	if rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "50") || !strings.Contains(err.Error(), "51") {
		t.Errorf("51 in all: %v", err)
	}
	got = api.ContextGetResult{}
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if _, ok := got.Context["endpoints"]; ok {
		t.Errorf("a refused set must change nothing: %v", got.Context["endpoints"])
	}
	for i := range 4 {
		s.MustCommand(api.ContextSet, map[string]any{"setName": fmt.Sprintf("set%d", i), "items": []string{}}, nil)
	}

	// Files.
	var added api.FilesAddResult
	s.MustCommand(api.FilesAdd, map[string]any{"path": "docs/spec.md"}, &added)
	if added.Name != "spec.md" || added.Size != 5 {
		t.Errorf("add by path: %+v", added)
	}
	s.MustCommand(api.FilesAdd, map[string]any{"name": "data.csv", "contentBase64": base64.StdEncoding.EncodeToString([]byte("a,b\n1,2\n"))}, &added)
	if added.Name != "data.csv" || added.Size != 8 {
		t.Errorf("add by content: %+v", added)
	}
	var files api.FilesListResult
	s.MustCommand(api.FilesList, map[string]any{}, &files)
	if !slices.Equal(files.Files, []string{"data.csv", "spec.md"}) {
		t.Errorf("list: %v", files.Files)
	}
	if b, err := os.ReadFile(filepath.Join(created.Session.Folder, "sources", "data.csv")); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("copied content: %q %v", b, err)
	}
	s.MustCommand(api.FilesRemove, map[string]any{"name": "spec.md"}, nil)
	s.MustCommand(api.FilesList, map[string]any{"subdir": "sources"}, &files)
	if !slices.Equal(files.Files, []string{"data.csv"}) {
		t.Errorf("after remove: %v", files.Files)
	}

	// Rename sends sessionUpdated and renames the folder.
	var renamed api.SessionResult
	s.MustCommand(api.SessionRename, map[string]any{"sessionId": id, "title": "Login redirect loop"}, &renamed)
	if renamed.Session.Title != "Login redirect loop" || renamed.Session.TitleSource != "user" || !strings.Contains(renamed.Session.Folder, "login-redirect-loop") {
		t.Errorf("rename: %+v", renamed.Session)
	}
	if _, err := os.Stat(created.Session.Folder); !os.IsNotExist(err) {
		t.Errorf("old folder still exists: %v", err)
	}
	up := s.WaitNotification(api.SessionUpdated, 1)
	var su api.SessionUpdatedParams
	mustUnmarshal(t, up.Params, &su)
	if su.SessionID != id || su.Title != "Login redirect loop" || su.TitleSource != "user" {
		t.Errorf("sessionUpdated: %+v", su)
	}

	// List and search.
	var other api.SessionResult
	// Activity times are in milliseconds and each write moves a session's
	// at least one past its last, so a burst of writes runs ahead of the
	// clock: wait until the clock is past the renamed session's, so
	// "newest" is unambiguous.
	for time.Now().Before(renamed.Session.UpdatedAt.Add(5 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	// A new session is listed once it holds something (a title of the
	// user's here): an empty one is left out.
	var blank api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &blank)
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id {
		t.Errorf("list with a new empty session %s: %+v", blank.Session.ID, list.Sessions)
	}
	s.MustCommand(api.SessionNew, map[string]any{"title": "Other"}, &other)
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].ID != other.Session.ID {
		t.Errorf("list, newest first: %+v", list.Sessions)
	}
	if list.Sessions[1].FileCount != 1 {
		t.Errorf("fileCount: %+v", list.Sessions[1])
	}
	s.MustCommand(api.SessionList, map[string]any{"query": "redirect"}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id {
		t.Errorf("list query: %+v", list.Sessions)
	}
	var hits api.SearchResult
	s.MustCommand(api.SessionSearch, map[string]any{"query": "redirect"}, &hits)
	if len(hits.Hits) == 0 || hits.Hits[0].SessionID != id {
		t.Errorf("search: %+v", hits)
	}

	// Export.
	var exp api.ExportResult
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id, "format": "markdown"}, &exp)
	if !strings.Contains(exp.Content, "Login redirect loop") || !strings.Contains(exp.Content, root+"/main.go") {
		t.Errorf("markdown export: %s", exp.Content)
	}
	if b, err := os.ReadFile(exp.Path); err != nil || string(b) != exp.Content {
		t.Errorf("export file: %v", err)
	}
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": id, "format": "json"}, &exp)
	var j map[string]any
	if err := json.Unmarshal([]byte(exp.Content), &j); err != nil || j["v"] != float64(1) {
		t.Errorf("json export: %v %v", err, exp.Content)
	}

	// Resume makes it current, reports missing files and the reminder.
	if err := os.Remove(filepath.Join(root, "README.md")); err != nil {
		t.Fatal(err)
	}
	var res api.ResumeResult
	s.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, &res)
	if res.Session.ID != id || !slices.Equal(res.MissingFiles, []string{root + "/README.md"}) {
		t.Errorf("resume: %+v", res)
	}
	// Resume records the connection's envHint first (the fake editor's
	// clientInfo and workspace; no git repository), so the reminder starts
	// with it.
	wantReminder := "Environment: lsptest; workspace " + root + "\nRelevant files:\n- " + root + "/main.go\n- " + root + "/docs/spec.md\n(1 file not found)\nports: 8080, 5432\n"
	if res.Reminder != wantReminder {
		t.Errorf("reminder:\n%s\nwant:\n%s", res.Reminder, wantReminder)
	}
	n := s.WaitFor("contextChanged resume", func(m *lsptest.Message) bool {
		return m.Method == api.ContextChanged && strings.Contains(string(m.Params), `"resume"`)
	})
	mustUnmarshal(t, n.Params, &cc)
	if cc.SessionID != id || !slices.Equal(cc.Missing, []string{root + "/README.md"}) {
		t.Errorf("resume notification: %+v", cc)
	}
	// Current session is the resumed one: a command without sessionId uses it.
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if !slices.Equal(got.Context["ports"], []string{"8080", "5432"}) {
		t.Errorf("current after resume: %v", got.Context)
	}

	// Show.
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if show.Session.ID != id || show.Messages == nil {
		t.Errorf("show: %+v", show)
	}

	// Delete clears the current session.
	var del api.DeleteResult
	s.MustCommand(api.SessionDelete, map[string]any{"sessionId": id}, &del)
	if !del.Deleted {
		t.Errorf("delete: %+v", del)
	}
	if err := s.Command(api.SessionShow, map[string]any{"sessionId": id}, nil); rpcCode(t, err) != -32602 {
		t.Errorf("show deleted: %v", err)
	}
	got = api.ContextGetResult{}
	s.MustCommand(api.ContextGet, map[string]any{}, &got)
	if len(got.Context) != 0 {
		t.Errorf("no current session after delete: %v", got.Context)
	}
}

// TestSessionCreatedOnFirstNeed: a write without a session creates one.
func TestSessionCreatedOnFirstNeed(t *testing.T) {
	parallel(t, waitTests)
	s, _ := startWithRoot(t)
	var files api.FilesListResult
	s.MustCommand(api.FilesList, map[string]any{}, &files)
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("a read must not create a session: %+v", list.Sessions)
	}
	s.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"3000"}}, nil)
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("a write creates one session: %+v", list.Sessions)
	}
	s.MustCommand(api.ContextSet, map[string]any{"setName": "ports", "items": []string{"3001"}, "mode": "merge"}, nil)
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("and then uses it: %+v", list.Sessions)
	}
}

func mustUnmarshal(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
