package command

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/protocol.md")

const (
	docPath   = "../../docs/protocol.md"
	beginMark = "<!-- BEGIN GENERATED: go test ./lsp/command -update -->\n"
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
	t.Errorf("docs/protocol.md is stale: run go test ./lsp/command -update")
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
