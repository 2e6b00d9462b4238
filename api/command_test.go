package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/protocol.md")

const (
	docPath   = "../docs/protocol.md"
	beginMark = "<!-- BEGIN GENERATED: go test ./api -update -->\n"
	endMark   = "<!-- END GENERATED -->\n"
)

// TestProtocolDocIsCurrent fails when docs/protocol.md's generated reference
// differs from the command table.
func TestProtocolDocIsCurrent(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), beginMark)
	if !ok {
		t.Fatalf("docs/protocol.md has no %q marker", beginMark)
	}
	current, after, ok := strings.Cut(rest, endMark)
	if !ok {
		t.Fatalf("docs/protocol.md has no %q marker", endMark)
	}
	want := Reference()
	if current == want {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(before+beginMark+want+endMark+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/protocol.md is stale: run go test ./api -update")
}

// TestExamplesMatchTypes: every example argument decodes strictly into its
// type and every example result decodes into its result type.
func TestExamplesMatchTypes(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range append(append([]Info(nil), Commands...), Notifications...) {
		if seen[c.ID] {
			t.Errorf("%s declared twice", c.ID)
		}
		seen[c.ID] = true
		if c.Doc == "" || c.ExampleResult == "" {
			t.Errorf("%s: missing doc or example", c.ID)
		}
		if c.Args != nil {
			dec := json.NewDecoder(strings.NewReader(c.ExampleArgs))
			dec.DisallowUnknownFields()
			if err := dec.Decode(reflect.New(reflect.TypeOf(c.Args)).Interface()); err != nil {
				t.Errorf("%s: example arguments do not fit %T: %v", c.ID, c.Args, err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(c.ExampleResult)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(reflect.New(reflect.TypeOf(c.Result)).Interface()); err != nil {
			t.Errorf("%s: example result does not fit %T: %v", c.ID, c.Result, err)
		}
		if strings.HasPrefix(c.ID, "ctxls.") && !strings.Contains(c.ExampleResult, `"v": 1`) {
			t.Errorf("%s: example result lacks \"v\": 1", c.ID)
		}
	}
}

// TestClientNotificationExamples: every client notification's example
// params decode strictly into its params type and are rendered in
// docs/protocol.md.
func TestClientNotificationExamples(t *testing.T) {
	if len(ClientNotifications) == 0 {
		t.Fatal("no client notifications declared")
	}
	ref := Reference()
	for _, n := range ClientNotifications {
		if n.Doc == "" || n.Args == nil || n.ExampleArgs == "" {
			t.Errorf("%s: missing doc, params type or example", n.ID)
			continue
		}
		dec := json.NewDecoder(strings.NewReader(n.ExampleArgs))
		dec.DisallowUnknownFields()
		if err := dec.Decode(reflect.New(reflect.TypeOf(n.Args)).Interface()); err != nil {
			t.Errorf("%s: example params do not fit %T: %v", n.ID, n.Args, err)
		}
		if !strings.Contains(ref, "\n### "+n.ID+"\n") {
			t.Errorf("%s is not in the generated reference", n.ID)
		}
	}
}

// TestServerRequestExamples: every request the server makes has a doc and
// examples that decode strictly into its params and answer types.
func TestServerRequestExamples(t *testing.T) {
	for _, r := range ServerRequests {
		if r.Doc == "" || r.Args == nil || r.Result == nil || r.ExampleArgs == "" || r.ExampleResult == "" {
			t.Errorf("%s: missing doc, types or examples", r.ID)
			continue
		}
		for _, c := range []struct {
			example string
			v       any
		}{{r.ExampleArgs, r.Args}, {r.ExampleResult, r.Result}} {
			dec := json.NewDecoder(strings.NewReader(c.example))
			dec.DisallowUnknownFields()
			if err := dec.Decode(reflect.New(reflect.TypeOf(c.v)).Interface()); err != nil {
				t.Errorf("%s: example %s does not fit %T: %v", r.ID, c.example, c.v, err)
			}
		}
	}
}

// TestEveryFieldHasALimit: a string, list or raw field without a stated
// limit cannot be added to an argument type.
func TestEveryFieldHasALimit(t *testing.T) {
	for _, c := range Commands {
		for _, f := range Fields(reflect.TypeOf(c.Args)) {
			switch f.Type.Kind() {
			case reflect.String, reflect.Slice, reflect.Int, reflect.Int64:
				if f.Max <= 0 {
					t.Errorf("%s: field %s has no max tag", c.ID, f.Name)
				}
				if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String && f.ItemMax <= 0 {
					t.Errorf("%s: list field %s has no itemMax tag", c.ID, f.Name)
				}
			}
		}
	}
}

// TestCheck covers the checks of Check itself; the table test in
// lsp/e2e/abuse_test.go sends every command over the limits.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		v    any
		want string // "" for no error
	}{
		{`{"sessionId":"x"}`, &SessionRefArgs{SessionID: "x"}, ""},
		{`{}`, &SessionRefArgs{}, "sessionId is required"},
		{`{"sessionId":null}`, &SessionRefArgs{}, "sessionId is required"},
		{`{}`, &SessionIDArgs{SessionID: strings.Repeat("x", 65)}, "sessionId is 65 bytes long; the limit is 64 bytes"},
		{`{}`, &SessionListArgs{Limit: 501}, "limit must be at most 500, got 501"},
		{`{"setName":"a","items":[]}`, &ContextSetArgs{SetName: "a", Items: make([]string, 101)}, "items has 101 items; the limit is 100"},
		{`{"setName":"a","items":[]}`, &ContextSetArgs{SetName: "a", Items: []string{"a", strings.Repeat("x", 4097)}}, "items item 2 is 4097 bytes long; the limit is 4096 bytes"},
		{`{"message":"m"}`, &ChatArgs{Message: "m", WorkDoneToken: json.RawMessage(`{}`)}, "workDoneToken must be an integer or a string"},
		{`{"message":"m"}`, &ChatArgs{Message: "m", WorkDoneToken: json.RawMessage(`"` + strings.Repeat("x", 250) + `"`)}, ""},
		{`{"message":"m"}`, &ChatArgs{Message: "m", WorkDoneToken: json.RawMessage(`7`)}, ""},
	} {
		err := Check([]byte(tc.raw), tc.v)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("Check(%s, %+v) = %v, want %q", tc.raw, tc.v, err, tc.want)
		}
	}
}

// TestBindingsAreCurrent fails when the clients' generated protocol
// bindings differ from the tables (go test ./api -update).
func TestBindingsAreCurrent(t *testing.T) {
	for path, want := range map[string]string{TypeScriptPath: TypeScript(), LuaPath: Lua(), ElispPath: Elisp(), GoPath: Go()} {
		full := "../" + path
		got, err := os.ReadFile(full)
		if err == nil && string(got) == want {
			continue
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is stale: run go test ./api -update", path)
	}
}

// TestBindingsCoverTheTables: every command, request and notification is
// in both bindings, with its types in the TypeScript one.
func TestBindingsCoverTheTables(t *testing.T) {
	ts, lua := TypeScript(), Lua()
	for _, list := range [][]Info{Commands, Requests, Notifications, ServerRequests, ClientNotifications} {
		for _, c := range list {
			if !strings.Contains(ts, fmt.Sprintf("  %s: %q,", Name(c.ID), c.ID)) || !strings.Contains(ts, fmt.Sprintf("  %q: ", c.ID)) {
				t.Errorf("%s is not in the TypeScript bindings", c.ID)
			}
			if !strings.Contains(lua, fmt.Sprintf("= %q,", c.ID)) {
				t.Errorf("%s is not in the Lua bindings", c.ID)
			}
		}
	}
	for _, want := range []string{"export interface SessionResult {", "  session: Session;", "export type TitleSource = \"auto\" | \"model\" | \"user\";",
		"  sessionId?: string;", "  lastEditedAt: string;", `"ctxls.session.new": { args: SessionNewArgs; result: SessionResult };`} {
		if !strings.Contains(ts, want) {
			t.Errorf("TypeScript bindings lack %q", want)
		}
	}
	if Name("ctxls.session.regenerateTitle") != "sessionRegenerateTitle" || snake("ctxls/contextChanged") != "context_changed" {
		t.Errorf("names: %s %s", Name("ctxls.session.regenerateTitle"), snake("ctxls/contextChanged"))
	}
}
