package e2e_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// errorCase is one bad call and what the answer must say.
type errorCase struct {
	name string
	arg  any
	code int
	want string // substring of the error message
}

// TestCommandArgumentErrors sends every command wrong types for each of its
// fields, unknown fields, non-object and extra arguments; then the
// command-specific failures. Each must get a clear error, and the daemon must
// keep serving with its stored state intact.
func TestCommandArgumentErrors(t *testing.T) { bothTransports(t, testCommandArgumentErrors) }

func testCommandArgumentErrors(t *testing.T, start func(*testing.T) (*lsptest.Server, string)) {
	s, root := start(t)
	var sess api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "keep me"}, &sess)
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"main.go"}}, nil)
	unknownID := "aaaaaaaaaaaaaaaaaaaaaaaaaa"

	if err := os.Symlink("/etc/passwd", filepath.Join(sess.Session.Folder, "sources", "link")); err != nil {
		t.Fatal(err)
	}
	// A sparse file just over 25 MB: the limit is checked without reading it.
	big := filepath.Join(root, "big.bin")
	if f, err := os.Create(big); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(25<<20 + 1)
		f.Close()
	}

	specific := map[string][]errorCase{
		api.SessionNew: {
			{"title too long", map[string]any{"title": strings.Repeat("x", 300)}, -32602, "title"},
		},
		api.SessionResume: {
			{"missing id", map[string]any{}, -32602, "sessionId is required"},
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.SessionList: {
			{"negative limit", map[string]any{"limit": -1}, -32602, "limit"},
			{"bad cursor", map[string]any{"cursor": "%%%not-a-cursor"}, -32602, "cursor"},
		},
		api.SessionShow: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.SessionRename: {
			{"empty title", map[string]any{"sessionId": sess.Session.ID, "title": "  "}, -32602, "title"},
			{"control chars", map[string]any{"sessionId": sess.Session.ID, "title": "a\x00b"}, -32602, "title"},
			{"unknown id", map[string]any{"sessionId": unknownID, "title": "x"}, -32602, unknownID},
		},
		api.SessionDelete: {
			{"missing id", map[string]any{}, -32602, "sessionId is required"},
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.SessionSearch: {
			{"missing query", map[string]any{}, -32602, "query is required"},
			{"negative limit", map[string]any{"query": "x", "limit": -5}, -32602, "limit"},
		},
		api.SessionExport: {
			{"bad format", map[string]any{"format": "pdf"}, -32602, "pdf"},
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.SessionShare: {
			{"missing visibility", map[string]any{}, -32602, "visibility is required"},
			{"bad visibility", map[string]any{"visibility": "public"}, -32602, `visibility "public": want "private" or "team"`},
			{"unknown id", map[string]any{"sessionId": unknownID, "visibility": "team"}, -32602, unknownID},
			{"local store", map[string]any{"visibility": "team"}, -32602, "sharing needs the PostgreSQL store"},
		},
		api.ContextSet: {
			{"missing setName", map[string]any{"items": []string{"x"}}, -32602, "setName is required"},
			{"missing items", map[string]any{"setName": "ports"}, -32602, "items is required"},
			{"bad mode", map[string]any{"setName": "ports", "items": []string{"1"}, "mode": "append"}, -32602, "mode"},
			{"bad set name", map[string]any{"setName": "a/b", "items": []string{"1"}}, -32602, "a/b"},
			{"NUL item", map[string]any{"setName": "ports", "items": []string{"a\x00"}}, -32602, "NUL"},
			{"unknown id", map[string]any{"sessionId": unknownID, "setName": "ports", "items": []string{"1"}}, -32602, unknownID},
		},
		api.ContextGet: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.ContextCandids: {
			{"any field", map[string]any{"sessionId": "x"}, -32602, "unknown field"},
		},
		api.WorkspaceFiles: {
			{"query not a string", map[string]any{"query": 7}, -32602, "query"},
			{"query too long", map[string]any{"query": strings.Repeat("q", 257)}, -32602, "query"},
			{"limit over", map[string]any{"limit": 201}, -32602, "limit"},
			{"unknown field", map[string]any{"sessionId": "x"}, -32602, "unknown field"},
		},
		api.FilesAdd: {
			{"neither", map[string]any{}, -32602, "give path"},
			{"both", map[string]any{"path": "main.go", "name": "x", "contentBase64": "eA=="}, -32602, "not both"},
			{"no name", map[string]any{"contentBase64": "eA=="}, -32602, "name is required"},
			{"bad base64", map[string]any{"name": "x.txt", "contentBase64": "!!!"}, -32602, "base64"},
			{"traversal name", map[string]any{"name": "../evil", "contentBase64": "eA=="}, -32602, "evil"},
			{"slash", map[string]any{"name": "a/b", "contentBase64": "eA=="}, -32602, "a/b"},
			{"backslash", map[string]any{"name": `a\b`, "contentBase64": "eA=="}, -32602, `a\\b`},
			{"dot name", map[string]any{"name": "..", "contentBase64": "eA=="}, -32602, ".."},
			{"hidden", map[string]any{"name": ".env", "contentBase64": "eA=="}, -32602, ".env"},
			{"NUL", map[string]any{"name": "a\x00b", "contentBase64": "eA=="}, -32602, "NUL"},
			{"missing file", map[string]any{"path": root + "/nope.txt"}, -32602, "nope.txt"},
			{"directory", map[string]any{"path": root + "/docs"}, -32602, "docs"},
			{"too large", map[string]any{"path": big}, -32602, "is 26,214,401 bytes; the limit is 26,214,400 bytes (25 MiB)"},
			{"unknown id", map[string]any{"sessionId": unknownID, "path": "main.go"}, -32602, unknownID},
		},
		api.FilesList: {
			{"bad subdir", map[string]any{"subdir": "../.."}, -32602, "subdir"},
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.FilesRemove: {
			{"missing name", map[string]any{}, -32602, "name is required"},
			{"traversal", map[string]any{"name": "../history.md"}, -32602, "history.md"},
			{"not there", map[string]any{"name": "ghost.txt"}, -32602, "ghost.txt"},
			{"unknown id", map[string]any{"sessionId": unknownID, "name": "x"}, -32602, unknownID},
		},
		api.Chat: {
			{"missing message", map[string]any{}, -32602, "message is required"},
			{"bad file item", map[string]any{"message": "hi", "files": []string{"a\x00"}}, -32602, "NUL"},
		},
		api.RegenerateTitle: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.ChatPreview: {
			{"missing message", map[string]any{}, -32602, "message is required"},
			{"bad file item", map[string]any{"message": "hi", "files": []string{"a\x00"}}, -32602, "NUL"},
			{"a directory", map[string]any{"message": "hi", "files": []string{"."}}, -32602, "is a directory"},
			{"unknown id", map[string]any{"message": "hi", "sessionId": unknownID}, -32602, unknownID},
		},
		api.ClearTitle: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.FilesRead: {
			{"missing name", map[string]any{}, -32602, "name is required"},
			{"bad subdir", map[string]any{"subdir": "../..", "name": "x"}, -32602, "subdir"},
			{"not listed", map[string]any{"name": "../history.md"}, -32602, "is not a file of the session folder"},
			{"link", map[string]any{"name": "link"}, -32602, "is a symbolic link; it is not read"},
			{"unknown id", map[string]any{"sessionId": unknownID, "name": "x"}, -32602, unknownID},
		},
		api.MCPList: {
			{"tools not a boolean", map[string]any{"tools": "yes"}, -32602, "tools"},
		},
		api.MCPTrust: {
			{"missing path", map[string]any{}, -32602, "path is required"},
			{"no such file", map[string]any{"path": "/nonexistent/.mcp.json", "trust": true}, -32602, "/nonexistent/.mcp.json does not exist"},
			{"trust not a boolean", map[string]any{"path": "x", "trust": "yes"}, -32602, "trust"},
		},
		api.ModelsList: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
			{"id not a string", map[string]any{"sessionId": 7}, -32602, "sessionId"},
		},
		api.SetReviewMode: {
			{"missing mode", map[string]any{}, -32602, "mode is required"},
			{"bad mode", map[string]any{"mode": "maybe"}, -32602, `got "maybe"`},
			{"unknown id", map[string]any{"sessionId": unknownID, "mode": "auto"}, -32602, unknownID},
		},
		api.SessionUsage: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.SessionCompact: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
		},
		api.SessionUndo: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
			{"from not a number", map[string]any{"from": "7"}, -32602, "from"},
			{"nothing to undo", map[string]any{}, -32602, "nothing to undo"},
		},
		api.SessionRedo: {
			{"unknown id", map[string]any{"sessionId": unknownID}, -32602, unknownID},
			{"nothing to redo", map[string]any{}, -32602, "nothing to redo"},
		},
		api.SetModel: {
			{"missing model", map[string]any{}, -32602, "model is required"},
			{"null model", map[string]any{"model": nil}, -32602, "model is required"},
			{"spaces", map[string]any{"model": "gpt 4o"}, -32602, "spaces"},
			{"control chars", map[string]any{"model": "gpt\x00"}, -32602, "control"},
			{"too long", map[string]any{"model": strings.Repeat("m", 201)}, -32602, "200"},
			{"unknown id", map[string]any{"sessionId": unknownID, "model": "x"}, -32602, unknownID},
		},
		api.QuestionAnswer: {
			{"missing id", map[string]any{"action": "allow"}, -32602, "id is required"},
			{"missing action", map[string]any{"id": "q1"}, -32602, "action is required"},
			{"unknown id", map[string]any{"id": "q1", "action": "allow"}, -32602, `question "q1" is not open`},
			{"id too long", map[string]any{"id": strings.Repeat("q", 65), "action": "allow"}, -32602, "64"},
		},
		api.DocumentGet: {
			{"missing uri", map[string]any{}, -32602, "uri is required"},
			{"not open", map[string]any{"uri": "file:///not/open.go"}, -32602, "not open"},
		},
	}

	for _, c := range api.Commands {
		cases := specific[c.ID]
		if len(cases) == 0 {
			t.Errorf("%s has no specific error cases in this test", c.ID)
		}
		cases = append(cases, genericCases(c)...)
		for _, tc := range cases {
			err := s.Command(c.ID, tc.arg, nil)
			if err == nil {
				t.Errorf("%s %s: succeeded, want error %d", c.ID, tc.name, tc.code)
				continue
			}
			if code := rpcCode(t, err); code != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: got %v, want code %d mentioning %q", c.ID, tc.name, err, tc.code, tc.want)
			}
		}
	}
	// Two arguments and a non-object argument, through executeCommand directly.
	for _, args := range []any{[]any{map[string]any{}, map[string]any{}}, []any{"str"}, []any{42}, []any{[]any{}}} {
		if err := s.Call("workspace/executeCommand", map[string]any{"command": api.ContextGet, "arguments": args}, nil); rpcCode(t, err) != -32602 {
			t.Errorf("arguments %v: %v", args, err)
		}
	}
	if err := s.Call("workspace/executeCommand", map[string]any{"command": "ctxls.nope"}, nil); rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("unknown command: %v", err)
	}
	if err := s.Call("workspace/executeCommand", map[string]any{"command": 5}, nil); rpcCode(t, err) != -32602 {
		t.Errorf("command of the wrong type: %v", err)
	}

	// The symlink to /etc/passwd is removed as a link; the target is untouched.
	before, _ := os.ReadFile("/etc/passwd")
	s.MustCommand(api.FilesRemove, map[string]any{"name": "link"}, nil)
	if after, _ := os.ReadFile("/etc/passwd"); string(after) != string(before) || len(after) == 0 {
		t.Fatal("/etc/passwd changed")
	}

	// Still serving, state intact.
	var got api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{"sessionId": sess.Session.ID}, &got)
	if len(got.Context["files"]) != 1 {
		t.Errorf("context after bad input: %v", got.Context)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": sess.Session.ID}, &show)
	if show.Session.Title != "keep me" {
		t.Errorf("title after bad input: %q", show.Session.Title)
	}
}

// genericCases derives bad calls from a command's argument type: an unknown
// field, and a wrong JSON type for every field.
func genericCases(c api.Info) []errorCase {
	cases := []errorCase{{"unknown field", map[string]any{"bogusField": 1}, -32602, `unknown field "bogusField"`}}
	t := reflect.TypeOf(c.Args)
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.String() == "json.RawMessage" {
			continue // any JSON is accepted (a work-done token)
		}
		var wrong any
		switch f.Type.Kind() {
		case reflect.String:
			wrong = 42
		case reflect.Int, reflect.Int64:
			wrong = "ten"
		case reflect.Slice:
			wrong = "not-an-array"
		default:
			wrong = []any{}
		}
		cases = append(cases, errorCase{"wrong type for " + name, map[string]any{name: wrong}, -32602, `"` + name + `"`})
	}
	return cases
}
