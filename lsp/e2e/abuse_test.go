package e2e_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// abuseCase is one bad call and the error it must get.
type abuseCase struct {
	name string
	arg  map[string]any
	code int
	want []string // substrings of the error message
}

// maxErrorMessage bounds an error message: a clear error names the field
// and the limit, it does not echo a 10 MB value back.
const maxErrorMessage = 2048

// exampleArg is a command's example argument with sessionId replaced by id
// (the examples name sessions that do not exist).
func exampleArg(t *testing.T, c api.Info, id string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(c.ExampleArgs), &m); err != nil {
		t.Fatalf("%s example: %v", c.ID, err)
	}
	if _, ok := m["sessionId"]; ok {
		m["sessionId"] = id
	}
	return m
}

func with(m map[string]any, key string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	if v == nil {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

// abuseCases derives the bad calls of one command from its argument type:
// every required field missing (and null), an unknown session id, every
// field over its limit (just over; and far over: a 10 MB string per command,
// 100,000 items per list), and wrong JSON types beyond the one per field of
// genericCases (TestCommandArgumentErrors sends those and unknown fields).
func abuseCases(t *testing.T, c api.Info, sessionID, unknownID string) []abuseCase {
	base := exampleArg(t, c, sessionID)
	var cases []abuseCase
	huge := false // a 10 MB string was sent
	for _, f := range api.Fields(reflect.TypeOf(c.Args)) {
		if f.Required {
			cases = append(cases,
				abuseCase{"missing " + f.Name, with(base, f.Name, nil), -32602, []string{c.ID, f.Name + " is required"}},
				abuseCase{"null " + f.Name, with(base, f.Name, json.RawMessage("null")), -32602, []string{c.ID, f.Name + " is required"}})
		}
		if f.Name == "sessionId" {
			cases = append(cases, abuseCase{"unknown session", with(base, "sessionId", unknownID), -32602, []string{unknownID}})
		}
		over := func(name string, v any, want ...string) {
			cases = append(cases, abuseCase{name, with(base, f.Name, v), -32602, append([]string{c.ID, f.Name}, want...)})
		}
		limit := fmt.Sprint(f.Max)
		switch {
		case f.Type.Kind() == reflect.Bool:
			over(f.Name+" a string", "yes", "must be a boolean")
			over(f.Name+" a list", []any{true}, "must be a boolean")
		case f.Type == reflect.TypeFor[json.RawMessage]():
			over(f.Name+" over the limit", strings.Repeat("x", int(f.Max)+1), "limit is "+limit)
			over(f.Name+" an object", map[string]any{}, "integer or a string")
		case f.Type.Kind() == reflect.String:
			over(f.Name+" over the limit", strings.Repeat("x", int(f.Max)+1), "limit is "+limit)
			if !huge && f.Max < 10<<20 {
				// One 10 MB string per command: each costs the daemon
				// about 0.3 s of CPU in JSON decoding.
				huge = true
				over(f.Name+" 10 MB", strings.Repeat("y", 10<<20), "limit is "+limit)
			}
			for _, wrong := range []any{true, 1.5, map[string]any{}, []any{"a"}} {
				over(fmt.Sprintf("%s as %T", f.Name, wrong), wrong, "must be a string")
			}
		case f.Type.Kind() == reflect.Slice:
			items := func(n int) []string {
				out := make([]string, n)
				for i := range out {
					out[i] = fmt.Sprint("item", i)
				}
				return out
			}
			over(f.Name+" over the limit", items(int(f.Max)+1), "limit is "+limit)
			over(f.Name+" 100,000 items", items(100_000), "limit is "+limit)
			over(f.Name+" an item over the limit", []string{"a", strings.Repeat("z", int(f.ItemMax)+1)}, "item 2", fmt.Sprint("limit is ", f.ItemMax))
			for _, wrong := range []any{[]any{1}, []any{[]any{}}, map[string]any{}, true} {
				over(fmt.Sprintf("%s as %T %v", f.Name, wrong, wrong), wrong, "must be")
			}
		case f.Type.Kind() == reflect.Int:
			over(f.Name+" over the limit", f.Max+1, "at most "+limit)
			over(f.Name+" max int64", int64(1<<63-1), "at most "+limit)
			for _, wrong := range []any{1.5, json.RawMessage("1e30"), json.RawMessage("99999999999999999999"), true, "7"} {
				over(fmt.Sprintf("%s as %v", f.Name, wrong), wrong, "must be a number")
			}
		}
	}
	return cases
}

// TestCommandAbuse sends every command of the table, over real stdio to the
// built binary, every bad argument abuseCases derives from its type, then
// whole messages at and over the frame limit. Each must be answered with
// -32602 (or -32600 for a message over the limit) and a short message naming
// the field and the limit; afterwards the daemon still serves and its data is
// intact.
func TestCommandAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 1 GB through the daemon")
	}
	parallel(t, loadTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"ok"}}))
	root, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000},
	}})

	// State that must survive.
	var sess api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "keep me"}, &sess)
	id := sess.Session.ID
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"main.go"}}, nil)
	s.MustCommand(api.FilesAdd, map[string]any{"name": "keep.txt", "contentBase64": "a2VlcA=="}, nil)
	docURI := "file://" + filepath.Join(root, "main.go")
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": docURI, "languageId": "go", "version": 1, "text": "package main\n"}})
	unknownID := "zzzzzzzzzzzzzzzzzzzzzzzzzz"

	total := 0
	for _, c := range api.Commands {
		cases := abuseCases(t, c, id, unknownID)
		if len(cases) == 0 && reflect.TypeOf(c.Args).NumField() > 0 {
			t.Errorf("%s: no cases derived", c.ID)
		}
		for _, tc := range cases {
			total++
			err := s.Command(c.ID, tc.arg, nil)
			checkRPCError(t, c.ID+" "+tc.name, err, tc.code, tc.want...)
		}
	}
	t.Logf("%d generated cases over %d commands", total, len(api.Commands))

	// The request form of chat and the executeCommand token.
	checkRPCError(t, "ctxls/chat 2 MB message", s.Call("ctxls/chat", map[string]any{"message": strings.Repeat("m", 2<<20)}, nil), -32602, "ctxls/chat", "message", "limit is 1048576")
	checkRPCError(t, "ctxls/chat missing message", s.Call("ctxls/chat", map[string]any{}, nil), -32602, "message is required")
	checkRPCError(t, "executeCommand 10 MB token", s.Call("workspace/executeCommand", map[string]any{"command": api.ContextGet, "arguments": []any{map[string]any{}}, "workDoneToken": strings.Repeat("t", 10<<20)}, nil), -32602, "workDoneToken", "limit is 256")
	checkRPCError(t, "executeCommand object token", s.Call("workspace/executeCommand", map[string]any{"command": api.ContextGet, "workDoneToken": map[string]any{}}, nil), -32602, "workDoneToken must be an integer or a string")
	checkRPCError(t, "executeCommand 10 MB command name", s.Call("workspace/executeCommand", map[string]any{"command": strings.Repeat("c", 10<<20)}, nil), -32602, "unknown command")

	// A 60 MB value fits in a message (64 MiB) but not in its field. Its
	// answer waits for 60 MB to be read and decoded, under the load of the
	// whole suite on two cores (over the fake editor's 15 s once, in the
	// fresh-clone CI run): the messages from here on get a minute.
	s.SetTimeout(time.Minute)
	checkRPCError(t, "60 MB contentBase64", s.Command(api.FilesAdd, map[string]any{"name": "big.bin", "contentBase64": strings.Repeat("QUFB", 15<<20)}, nil), -32602, "contentBase64", "limit is 34952536")

	// 70 MB messages are over the frame limit: skipped unread. A request is
	// answered with its own id wherever the id is; a notification is not
	// answered, the user is warned.
	big := strings.Repeat("A", 70_000_000)
	checkRPCError(t, "70 MB request", s.Command(api.SessionRename, map[string]any{"title": big}, nil), -32600, "workspace/executeCommand message of", "exceeds the limit of 67108864 bytes")
	s.WriteFrame([]byte(`{"jsonrpc":"2.0","method":"workspace/executeCommand","params":{"command":"ctxls.session.rename","arguments":[{"title":"` + big + `"}]},"id":"id-after-params"}`))
	m := s.WaitFor("answer to the 70 MB request with its id last", func(m *lsptest.Message) bool { return string(m.ID) == `"id-after-params"` })
	if m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "exceeds the limit") {
		t.Errorf("70 MB request, id last: %s %+v", m.Result, m.Error)
	}
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///huge.txt", "languageId": "text", "version": 1, "text": big}})
	warn := s.WaitFor("warning about the 70 MB didOpen", func(m *lsptest.Message) bool {
		return m.Method == "window/showMessage" && strings.Contains(string(m.Params), "textDocument/didOpen message of")
	})
	t.Logf("70 MB didOpen: %s", warn.Params)
	for _, m := range s.Received() {
		if len(m.ID) > 0 && m.Method == "" && string(m.ID) != `"id-after-params"` {
			t.Errorf("unexpected response (to a notification?): %s %+v", m.ID, m.Error)
		}
	}
	checkRPCError(t, "document.get of the refused document", s.Command(api.DocumentGet, map[string]any{"uri": "file:///huge.txt"}, nil), -32602, "not open")

	// Still serving, data intact.
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if show.Session.Title != "keep me" {
		t.Errorf("title after abuse: %q", show.Session.Title)
	}
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{"sessionId": id}, &got)
	if !slices.Equal(got.Context["files"], []string{filepath.Join(root, "main.go")}) || len(got.Context) != 1 {
		t.Errorf("context after abuse: %v", got.Context)
	}
	var files api.FilesListResult
	s.MustCommand(api.FilesList, map[string]any{"sessionId": id}, &files)
	if !slices.Equal(files.Files, []string{"keep.txt"}) {
		t.Errorf("files after abuse: %v", files.Files)
	}
	if b, err := os.ReadFile(filepath.Join(show.Session.Folder, "sources", "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("file content after abuse: %q %v", b, err)
	}
	var doc api.DocumentGetResult
	s.MustCommand(api.DocumentGet, map[string]any{"uri": docURI}, &doc)
	if doc.Text != "package main\n" || doc.Version != 1 {
		t.Errorf("document after abuse: %+v", doc)
	}
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 {
		t.Errorf("sessions after abuse: %d, want 1 (a refused call must not create one)", len(list.Sessions))
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the model provider; every chat call was invalid", n)
	}
	if pe := s.ProtocolErrors(); len(pe) > 0 {
		t.Errorf("protocol errors on stdout: %v", pe)
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// checkRPCError asserts err is a JSON-RPC error with code and every want in
// its (short) message.
func checkRPCError(t *testing.T, what string, err error, code int, want ...string) {
	t.Helper()
	var rerr *lsptest.RPCError
	if !errors.As(err, &rerr) {
		t.Errorf("%s: got %v, want JSON-RPC error %d", what, err, code)
		return
	}
	if rerr.Code != code {
		t.Errorf("%s: code %d (%s), want %d", what, rerr.Code, truncateForLog(rerr.Message), code)
	}
	for _, w := range want {
		if !strings.Contains(rerr.Message, w) {
			t.Errorf("%s: message %q does not mention %q", what, truncateForLog(rerr.Message), w)
		}
	}
	if len(rerr.Message) > maxErrorMessage {
		t.Errorf("%s: message of %d bytes: %q", what, len(rerr.Message), truncateForLog(rerr.Message))
	}
}

func truncateForLog(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
