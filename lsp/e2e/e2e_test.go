package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestRestartKeepsEverything: over the built binary and real stdio, a session
// is created, given context and files, renamed, found by search and
// exported; after the daemon restarts, everything reads back identically.
func TestRestartKeepsEverything(t *testing.T) {
	parallel(t, waitTests)
	root, rootURI := workspace(t)
	dataDir := t.TempDir()
	start := func() *lsptest.Server {
		s := lsptest.Binary(t, []string{"CTXLS_DATA_DIR=" + dataDir}, "--stdio")
		s.Initialize(lsptest.InitOptions{RootURI: rootURI})
		return s
	}

	s := start()
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &created)
	id := created.Session.ID
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"main.go", "README.md"}}, nil)
	s.MustCommand(api.ContextSet, map[string]any{"setName": "endpoints", "items": []string{"GET /api/users"}}, nil)
	s.MustCommand(api.ContextSet, map[string]any{"setName": "applet", "items": []string{"chart type=bar"}}, nil)
	s.MustCommand(api.FilesAdd, map[string]any{"path": "docs/spec.md"}, nil)
	s.MustCommand(api.SessionRename, map[string]any{"sessionId": id, "title": "Quarterly report pipeline"}, nil)

	snapshot := func(s *lsptest.Server) map[string]string {
		out := map[string]string{}
		call := func(key, cmd string, arg map[string]any) {
			var raw json.RawMessage
			s.MustCommand(cmd, arg, &raw)
			out[key] = string(raw)
		}
		call("show", api.SessionShow, map[string]any{"sessionId": id})
		call("context", api.ContextGet, map[string]any{"sessionId": id})
		call("files", api.FilesList, map[string]any{"sessionId": id})
		call("list", api.SessionList, map[string]any{})
		call("search", api.SessionSearch, map[string]any{"query": "quarterly"})
		call("export", api.SessionExport, map[string]any{"sessionId": id, "format": "json"})
		return out
	}
	before := snapshot(s)
	if !strings.Contains(before["search"], id) {
		t.Fatalf("search did not find the session: %s", before["search"])
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	s2 := start()
	after := snapshot(s2)
	for k := range before {
		if before[k] != after[k] {
			t.Errorf("%s differs after restart:\nbefore: %s\nafter:  %s", k, before[k], after[k])
		}
	}
	var res api.ResumeResult
	s2.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, &res)
	if !slices.Equal(res.Context["files"], []string{root + "/main.go", root + "/README.md"}) || res.Session.Title != "Quarterly report pipeline" {
		t.Errorf("resume after restart: %+v", res)
	}
	if !strings.Contains(res.Reminder, "Last applet: chart type=bar") {
		t.Errorf("reminder: %q", res.Reminder)
	}
	s2.Shutdown()
	s2.Exit()
	for _, srv := range []*lsptest.Server{s, s2} {
		if errs := srv.ProtocolErrors(); len(errs) > 0 {
			t.Errorf("stdout carried non-protocol output: %q", errs)
		}
	}

	// initializationOptions.session resumes at start and announces it.
	s3 := lsptest.Binary(t, nil, "serve", "--data-dir", dataDir)
	s3.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{"session": id}})
	n := s3.WaitNotification(api.ContextChanged, 1)
	var cc api.ContextChangedParams
	mustUnmarshal(t, n.Params, &cc)
	if cc.SessionID != id || cc.Reason != "resume" || len(cc.Context["files"]) != 2 {
		t.Errorf("resume at start: %+v", cc)
	}
	var got api.ContextGetResult
	s3.MustCommand(api.ContextGet, map[string]any{}, &got)
	if len(got.Context["endpoints"]) != 1 {
		t.Errorf("current session from initializationOptions: %v", got.Context)
	}
	s3.Shutdown()
	s3.Exit()
}

// TestTwoDaemonsOneStore: two daemons write to one data directory at the same
// time; nothing is lost.
func TestTwoDaemonsOneStore(t *testing.T) {
	parallel(t, waitTests)
	dataDir := t.TempDir()
	const perDaemon = 60
	var wg sync.WaitGroup
	ids := make([][]string, 2)
	for d := range 2 {
		s := lsptest.Binary(t, nil, "serve", "--data-dir", dataDir)
		s.Initialize(lsptest.InitOptions{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perDaemon {
				var created api.SessionResult
				if err := s.Command(api.SessionNew, map[string]any{"title": fmt.Sprintf("daemon %d session %d", d, i)}, &created); err != nil {
					t.Errorf("daemon %d new: %v", d, err)
					return
				}
				ids[d] = append(ids[d], created.Session.ID)
				for j := range 3 {
					if err := s.Command(api.ContextSet, map[string]any{"setName": "ports", "items": []string{fmt.Sprint(1000*d + j)}, "mode": "merge"}, nil); err != nil {
						t.Errorf("daemon %d set: %v", d, err)
					}
				}
				if err := s.Command(api.FilesAdd, map[string]any{"name": fmt.Sprintf("f%d.txt", i), "contentBase64": "aGVsbG8="}, nil); err != nil {
					t.Errorf("daemon %d add: %v", d, err)
				}
				if err := s.Command(api.SessionRename, map[string]any{"title": fmt.Sprintf("renamed %d-%d", d, i)}, nil); err != nil {
					t.Errorf("daemon %d rename: %v", d, err)
				}
			}
			s.Shutdown()
			if code := s.Exit(); code != 0 {
				t.Errorf("daemon %d exit %d: %s", d, code, s.Stderr())
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	s := lsptest.Binary(t, nil, "serve", "--data-dir", dataDir)
	s.Initialize(lsptest.InitOptions{})
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{"limit": 500}, &list)
	if len(list.Sessions) != 2*perDaemon {
		t.Fatalf("%d sessions, want %d", len(list.Sessions), 2*perDaemon)
	}
	for d := range 2 {
		for i, id := range ids[d] {
			var show api.ShowResult
			s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
			if want := fmt.Sprintf("renamed %d-%d", d, i); show.Session.Title != want || show.Session.FileCount != 1 {
				t.Errorf("session %s: title %q files %d, want %q and 1", id, show.Session.Title, show.Session.FileCount, want)
			}
			var got api.ContextGetResult
			s.MustCommand(api.ContextGet, map[string]any{"sessionId": id}, &got)
			if len(got.Context["ports"]) != 3 {
				t.Errorf("session %s ports %v", id, got.Context["ports"])
			}
			if _, err := os.Stat(filepath.Join(show.Session.Folder, "sources", fmt.Sprintf("f%d.txt", i))); err != nil {
				t.Errorf("session %s file: %v", id, err)
			}
		}
	}
	s.Shutdown()
	s.Exit()
}
