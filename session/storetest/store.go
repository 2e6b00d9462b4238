package storetest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

func testCreateGetReopen(t *testing.T, e *Env) {
	dir, s := e.Dir, e.S // dir created by Open
	a, err := s.Create(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Title != session.DefaultTitle || a.TitleSource != session.TitleAuto || len(a.ID) != 26 {
		t.Errorf("default session: %+v", a)
	}
	b, err := s.Create(ctx, "  Fix: the Login Redirect!  ")
	if err != nil {
		t.Fatal(err)
	}
	if b.Title != "Fix: the Login Redirect!" || b.TitleSource != session.TitleUser {
		t.Errorf("titled session: %+v", b)
	}
	base := filepath.Base(b.Folder)
	if !strings.HasSuffix(base, "--fix-the-login-redirect--"+b.ID[:6]) || len(base) < 20 {
		t.Errorf("folder name %q", base)
	}
	for _, sub := range append(session.Subdirs, "history.md") {
		if _, err := os.Stat(filepath.Join(b.Folder, sub)); err != nil {
			t.Errorf("%s: %v", sub, err)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v", fi.Mode().Perm())
	}
	if e.Local { // the PostgreSQL store's database is not in dir
		if fi, _ := os.Stat(filepath.Join(dir, "ctxls.db")); fi.Mode().Perm() != 0o600 {
			t.Errorf("db mode %v", fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(b.Folder); fi.Mode().Perm() != 0o700 {
		t.Errorf("session folder mode %v", fi.Mode().Perm())
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown id: %v", err)
	}
	s.Close()
	// Reopen: migrations are idempotent and data is there.
	s2 := e.Reopen()
	got, err := s2.Get(ctx, b.ID)
	if err != nil || got.Title != b.Title || !got.CreatedAt.Equal(b.CreatedAt) {
		t.Errorf("after reopen: %+v %v", got, err)
	}
	if _, err := s.Create(ctx, strings.Repeat("x", 201)); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("long title: %v", err)
	}
}

func testListOrderCursorQuery(t *testing.T, e *Env) {
	s := e.S
	// A clock that moves 1 ms a call: two sessions made in the same
	// millisecond would tie on updated_at and sort by id, not by age.
	clock := time.Now()
	e.SetClock(s, func() time.Time { clock = clock.Add(time.Millisecond); return clock })
	var ids []string
	for i := range 7 {
		ss, err := s.Create(ctx, fmt.Sprintf("session %d %s", i, []string{"alpha", "beta"}[i%2]))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ss.ID)
	}
	// Activity on the first makes it the newest.
	if err := s.AppendMessage(ctx, &session.Message{SessionID: ids[0], Role: session.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	var all []string
	Cursor := ""
	for {
		page, next, err := s.List(ctx, session.ListOptions{Limit: 3, Cursor: Cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			all = append(all, p.ID)
		}
		if next == "" {
			break
		}
		Cursor = next
	}
	want := []string{ids[0], ids[6], ids[5], ids[4], ids[3], ids[2], ids[1]}
	if !slices.Equal(all, want) {
		t.Errorf("order: %v, want %v", all, want)
	}
	page, _, err := s.List(ctx, session.ListOptions{Query: "BETA"})
	if err != nil || len(page) != 3 {
		t.Errorf("query: %d %v", len(page), err)
	}
	page, _, _ = s.List(ctx, session.ListOptions{Query: "%"})
	if len(page) != 0 {
		t.Errorf("%% must be literal: %d", len(page))
	}
	first, _, _ := s.List(ctx, session.ListOptions{Limit: 1})
	if first[0].MessageCount != 1 {
		t.Errorf("messageCount %d", first[0].MessageCount)
	}
	if _, _, err := s.List(ctx, session.ListOptions{Cursor: "garbage!"}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("bad cursor: %v", err)
	}
	if _, _, err := s.List(ctx, session.ListOptions{Limit: -1}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
}

func testRenameMovesFolder(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	if _, err := s.AddFile(ctx, a.ID, "notes.txt", strings.NewReader("n")); err != nil {
		t.Fatal(err)
	}
	b, err := s.Rename(ctx, a.ID, "Better name", session.TitleUser)
	if err != nil {
		t.Fatal(err)
	}
	if b.Title != "Better name" || !strings.Contains(b.Folder, "--better-name--") {
		t.Errorf("rename: %+v", b)
	}
	if _, err := os.Stat(a.Folder); !os.IsNotExist(err) {
		t.Errorf("old folder: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(b.Folder, "sources", "notes.txt")); err != nil || string(data) != "n" {
		t.Errorf("file moved with the folder: %q %v", data, err)
	}
	// A model title never overrides a user title.
	if changed, err := s.SetTitleIfAuto(ctx, a.ID, "Model idea"); err != nil || changed {
		t.Errorf("SetTitleIfAuto over user title: %v %v", changed, err)
	}
	c, _ := s.Create(ctx, "")
	if changed, err := s.SetAutoTitle(ctx, c.ID, "first line of message"); err != nil || !changed {
		t.Errorf("SetAutoTitle: %v %v", changed, err)
	}
	if changed, err := s.SetTitleIfAuto(ctx, c.ID, "Model idea"); err != nil || !changed {
		t.Errorf("SetTitleIfAuto: %v %v", changed, err)
	}
	got, _ := s.Get(ctx, c.ID)
	if got.Title != "Model idea" || got.TitleSource != session.TitleModel {
		t.Errorf("model title: %+v", got)
	}
	// Folder rename fails (target exists as a file): nothing changes.
	target := filepath.Join(s.DataDir(), "sessions", session.FolderName(got.CreatedAt, "Blocked", got.ID))
	if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(target+"-dir", 0o700); err != nil {
		t.Fatal(err)
	}
	os.Remove(target)
	if err := os.Rename(target+"-dir", target); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "occupied"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rename(ctx, c.ID, "Blocked", session.TitleUser); err == nil {
		t.Error("rename onto an occupied folder succeeded")
	}
	after, _ := s.Get(ctx, c.ID)
	if after.Title != "Model idea" || after.Folder != got.Folder {
		t.Errorf("failed rename changed state: %+v", after)
	}
	for _, bad := range []string{"", "  ", "a\nb", strings.Repeat("x", 201)} {
		if _, err := s.Rename(ctx, c.ID, bad, session.TitleUser); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("rename %q: %v", bad, err)
		}
	}
}

func testMessagesHistoryExport(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "Chat")
	u := &session.Message{SessionID: a.ID, Role: session.RoleUser, Content: "How do I parse JSON?", Files: []string{"/w/main.go", "/w/wört space/a.go:3-5"}}
	if err := s.AppendMessage(ctx, u); err != nil {
		t.Fatal(err)
	}
	m := &session.Message{SessionID: a.ID, Role: session.RoleAssistant, Content: "Use enc", Status: session.StatusStreaming}
	if err := s.AppendMessage(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateMessage(ctx, m.ID, "Use encoding/json.", session.StatusComplete, &session.Usage{PromptTokens: 10, CompletionTokens: 4, CachedTokens: 6}); err != nil {
		t.Fatal(err)
	}
	tc := &session.Message{SessionID: a.ID, Role: session.RoleAssistant, ToolCalls: []byte(`[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]`)}
	if err := s.AppendMessage(ctx, tc); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages(ctx, a.ID)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("messages: %v %v", msgs, err)
	}
	if msgs[1].Content != "Use encoding/json." || msgs[1].Status != session.StatusComplete || msgs[1].Usage == nil || msgs[1].Usage.CompletionTokens != 4 || msgs[1].Usage.CachedTokens != 6 {
		t.Errorf("updated message: %+v", msgs[1])
	}
	if string(msgs[2].ToolCalls) != string(tc.ToolCalls) {
		t.Errorf("tool calls: %s", msgs[2].ToolCalls)
	}
	// The files that went with the question, kept with it; none with the others.
	if !slices.Equal(msgs[0].Files, u.Files) || msgs[1].Files != nil || msgs[2].Files != nil {
		t.Errorf("files: %q, %q, %q", msgs[0].Files, msgs[1].Files, msgs[2].Files)
	}
	if err := s.FlushHistory(); err != nil {
		t.Fatal(err)
	}
	hist, _ := os.ReadFile(filepath.Join(a.Folder, "history.md"))
	if !strings.Contains(string(hist), "Use encoding/json.") || !strings.Contains(string(hist), "How do I parse JSON?") {
		t.Errorf("history.md not current:\n%s", hist)
	}
	if err := s.AppendMessage(ctx, &session.Message{SessionID: "nope", Role: session.RoleUser}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("append to unknown: %v", err)
	}
	if err := s.AppendMessage(ctx, &session.Message{SessionID: a.ID, Role: "wizard"}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("bad role: %v", err)
	}
	if err := s.UpdateMessage(ctx, 9999, "", session.StatusComplete, nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("update unknown: %v", err)
	}
	path, content, err := s.Export(ctx, a.ID, "markdown")
	if err != nil || !strings.HasSuffix(path, "export.md") || !strings.Contains(content, "# Chat") {
		t.Errorf("export md: %s %v", path, err)
	}
	_, content, err = s.Export(ctx, a.ID, "json")
	if err != nil || !strings.Contains(content, `"v": 1`) || !strings.Contains(content, "encoding/json") {
		t.Errorf("export json: %v", err)
	}
	if _, _, err := s.Export(ctx, a.ID, "pdf"); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("export pdf: %v", err)
	}
	if err := s.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Folder); !os.IsNotExist(err) {
		t.Errorf("folder after delete: %v", err)
	}
	if _, err := s.Messages(ctx, a.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("messages after delete: %v", err)
	}
	if err := s.Delete(ctx, a.ID); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

func testContextSets(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	ch, err := s.UpdateContext(ctx, a.ID, "ports", []string{" 8080 ", "5432", "8080"}, "", session.AddedByUser, nil)
	if err != nil || !slices.Equal(ch.Items, []string{"8080", "5432"}) || !slices.Equal(ch.Added, ch.Items) {
		t.Fatalf("replace: %+v %v", ch, err)
	}
	ch, _ = s.UpdateContext(ctx, a.ID, "ports", []string{"3000", "5432"}, session.ModeMerge, session.AddedByUser, nil)
	if !slices.Equal(ch.Items, []string{"8080", "5432", "3000"}) || !slices.Equal(ch.Added, []string{"3000"}) {
		t.Errorf("merge: %+v", ch)
	}
	ch, _ = s.UpdateContext(ctx, a.ID, "ports", []string{"1"}, session.ModeReplace, session.AddedByUser, nil)
	if !slices.Equal(ch.Removed, []string{"8080", "5432", "3000"}) {
		t.Errorf("removed: %+v", ch)
	}
	ch, _ = s.UpdateContext(ctx, a.ID, "fles", []string{"x"}, "", session.AddedByUser, nil)
	if len(ch.Warnings) != 1 || !strings.Contains(ch.Warnings[0], `unknown set name "fles" — typo?`) || !strings.Contains(ch.Warnings[0], `"files"`) {
		t.Errorf("warning: %v", ch.Warnings)
	}
	ch, _ = s.UpdateContext(ctx, a.ID, "fles", nil, "", session.AddedByUser, nil)
	if _, ok := ch.Context["fles"]; ok {
		t.Error("empty replace must delete the set")
	}
	if _, err := s.UpdateContext(ctx, a.ID, "ports", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}, "", session.AddedByUser, nil); !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), "11 items; the limit is 10") {
		t.Errorf("per-set limit: %v", err)
	}
	for i := range 4 {
		items := make([]string, 10)
		for j := range items {
			items[j] = fmt.Sprintf("%d-%d", i, j)
		}
		if _, err := s.UpdateContext(ctx, a.ID, fmt.Sprintf("s%d", i), items, "", session.AddedByUser, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateContext(ctx, a.ID, "endpoints", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, "", session.AddedByUser, nil); !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), "51 context items; the limit is 50") {
		t.Errorf("total limit: %v", err)
	}
	c, _ := s.Context(ctx, a.ID)
	if _, ok := c["endpoints"]; ok || len(c["ports"]) != 1 {
		t.Errorf("refused change changed state: %v", c)
	}
	for _, bad := range []string{"", "a b", "a/b", strings.Repeat("x", 65)} {
		if _, err := s.UpdateContext(ctx, a.ID, bad, []string{"x"}, "", session.AddedByUser, nil); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("set name %q: %v", bad, err)
		}
	}
	for _, bad := range [][]string{{""}, {"a\x00"}, {strings.Repeat("x", 5000)}} {
		if _, err := s.UpdateContext(ctx, a.ID, "ports", bad, "", session.AddedByUser, nil); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("items %q: %v", bad, err)
		}
	}
	if _, err := s.UpdateContext(ctx, "nope", "ports", []string{"1"}, "", session.AddedByUser, nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

func testFilesSafety(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "")
	if _, err := s.AddFile(ctx, a.ID, "data.csv", strings.NewReader("1,2")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", `a\b`, ".env", "a\x00b", strings.Repeat("x", 256)} {
		if _, err := s.AddFile(ctx, a.ID, bad, strings.NewReader("x")); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("add %q: %v", bad, err)
		}
		if err := s.RemoveFile(ctx, a.ID, bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("remove %q: %v", bad, err)
		}
	}
	// Over 25 MB: refused, nothing left behind (a reader, not an allocation).
	if _, err := s.AddFile(ctx, a.ID, "big.bin", io.LimitReader(zeros{}, session.MaxFileSize+1)); !errors.Is(err, session.ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	names, _ := s.ListFiles(ctx, a.ID, "")
	if !slices.Equal(names, []string{"data.csv"}) {
		t.Errorf("after refused add: %v", names)
	}
	entries, _ := os.ReadDir(filepath.Join(a.Folder, "sources"))
	if len(entries) != 1 {
		t.Errorf("temporary file left behind: %v", entries)
	}
	// Exactly 25 MB is fine.
	if fi, err := s.AddFile(ctx, a.ID, "max.bin", io.LimitReader(zeros{}, session.MaxFileSize)); err != nil || fi.Size != session.MaxFileSize {
		t.Errorf("25 MB: %v", err)
	}
	// A symlink in sources/ is replaced, never written through, and removed
	// as a link.
	outside := filepath.Join(t.TempDir(), "target.txt")
	os.WriteFile(outside, []byte("precious"), 0o600)
	link := filepath.Join(a.Folder, "sources", "link.txt")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddFile(ctx, a.ID, "link.txt", strings.NewReader("new")); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "precious" {
		t.Errorf("wrote through a symlink: %q", data)
	}
	os.Remove(link)
	os.Symlink(outside, link)
	if err := s.RemoveFile(ctx, a.ID, "link.txt"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "precious" {
		t.Error("removed the symlink's target")
	}
	if err := s.RemoveFile(ctx, a.ID, "ghost"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("remove missing: %v", err)
	}
	// sources/ replaced by a symlink to elsewhere: refused.
	b, _ := s.Create(ctx, "")
	elsewhere := t.TempDir()
	os.RemoveAll(filepath.Join(b.Folder, "sources"))
	os.Symlink(elsewhere, filepath.Join(b.Folder, "sources"))
	if _, err := s.AddFile(ctx, b.ID, "x.txt", strings.NewReader("x")); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("symlinked sources/: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote outside: %v", entries)
	}
	// From a path.
	src := filepath.Join(t.TempDir(), "spec.md")
	os.WriteFile(src, []byte("spec"), 0o644)
	if fi, err := s.AddFileFromPath(ctx, a.ID, src); err != nil || fi.Name != "spec.md" || fi.Size != 4 {
		t.Errorf("from path: %+v %v", fi, err)
	}
	if _, err := s.AddFileFromPath(ctx, a.ID, filepath.Dir(src)); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("directory: %v", err)
	}
	if _, err := s.AddFileFromPath(ctx, a.ID, src+".missing"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := s.ListFiles(ctx, a.ID, "../.."); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("bad subdir: %v", err)
	}
	got, _ := s.Get(ctx, a.ID)
	if got.FileCount != 3 {
		t.Errorf("fileCount %d", got.FileCount)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func testSearch(t *testing.T, s Store) {
	a, _ := s.Create(ctx, "Kubernetes ingress")
	b, _ := s.Create(ctx, "")
	s.AppendMessage(ctx, &session.Message{SessionID: b.ID, Role: session.RoleUser, Content: "Why does the café ingress controller return 502?"})
	s.AppendMessage(ctx, &session.Message{SessionID: b.ID, Role: session.RoleAssistant, Content: "Unrelated text"})
	hits, err := s.Search(ctx, "ingress", 0)
	if err != nil || len(hits) != 2 {
		t.Fatalf("hits %+v %v", hits, err)
	}
	if hits[0].SessionID != a.ID || hits[0].MessageID != 0 || hits[1].SessionID != b.ID || hits[1].Role != session.RoleUser || !strings.Contains(hits[1].Snippet, "«ingress»") {
		t.Errorf("hits %+v", hits)
	}
	if hits, _ := s.Search(ctx, "cafe contr", 0); len(hits) != 1 {
		t.Errorf("diacritics and prefix: %+v", hits)
	}
	for _, q := range []string{`"foo`, `a AND`, `*`, `col:x`, `NEAR(a b)`, `-`, `^x`, "😀", `'`, "\x00"} {
		if _, err := s.Search(ctx, q, 5); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	if _, err := s.Search(ctx, "x", -1); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
}
