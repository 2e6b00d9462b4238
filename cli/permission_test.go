package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/tool"
)

// TestAllowToolPatterns: an --allow-tool pattern names the server and the
// tool apart: mcp__gh__* allows the tools of gh, not those of a server
// named gh__evil (whose model name mcp__gh__evil__x it also matched).
func TestAllowToolPatterns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, server, tool string
		want                  bool
	}{
		{"mcp__gh__*", "gh", "list_issues", true},
		{"mcp__gh__*", "gh__evil", "x", false},
		{"mcp__gh__evil__*", "gh__evil", "x", false}, // read as server gh, tools evil__*
		{"mcp__gh__evil__*", "gh", "evil__x", true},
		{"gh/*", "gh", "list_issues", true},
		{"gh/*", "gh__evil", "x", false},
		{"gh__evil/*", "gh__evil", "x", true},
		{"gh/*", "gh", "a/b", true}, // * is any characters, / included
		{"*/b", "a/x", "b", true},   // split at the first /: any server's tool b
		{"t/ech?", "t", "echo", true},
		{"t/ech?", "t", "ech", false},
		{"mcp__my_server__*", "my.server", "run", true}, // the mcp__ form is the model's name's parts
		{"my_server/*", "my.server", "run", false},
		{"t/[ae]dd", "t", "add", true},
		{"t/[^a]dd", "t", "add", false},
		{"*", "t", "add", true}, // every tool
		{"mcp__*", "t", "add", true},
		{"add", "t", "add", false}, // neither form: nothing
		{"*/*", "t", "add", true},
	} {
		a := &toolAsker{allow: []string{c.pattern}}
		if got := a.matches(c.server, c.tool); got != c.want {
			t.Errorf("%q on %s/%s: %v, want %v", c.pattern, c.server, c.tool, got, c.want)
		}
	}
}

// fakeTTY is a terminal opened once per question: it reads that
// question's answer and writes to screen.
type fakeTTY struct {
	io.Reader
	screen *strings.Builder
}

func (f fakeTTY) Write(p []byte) (int, error) { return f.screen.Write(p) }
func (fakeTTY) Close() error                  { return nil }

// TestPermissionShowsAllArguments: arguments longer than the question
// shows are cut with their count said, and [s] shows them whole (a field
// padded past the cut is not hidden) before the question is asked again.
func TestPermissionShowsAllArguments(t *testing.T) {
	t.Parallel()
	var screen strings.Builder
	answers := []string{"s\n", "n\n"}
	a := &toolAsker{errOut: io.Discard, tty: func() (io.ReadWriteCloser, error) {
		r := strings.NewReader(answers[0])
		answers = answers[1:]
		return fakeTTY{r, &screen}, nil
	}}
	args := `{"note":"` + strings.Repeat(" ", 3000) + `","command":"rm -rf ~"}`
	d, err := a.ask(context.Background(), tool.PermissionRequest{Call: chat.ToolCall{Server: "s", Tool: "run", Arguments: args}})
	if err != nil || d != tool.RejectOnce || len(answers) != 0 {
		t.Fatalf("%v %v, %d answers left", d, err, len(answers))
	}
	shown := screen.String()
	for _, want := range []string{"more characters). Allow it?", "[s] show all the arguments", `"command":"rm -rf ~"}`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, shown)
		}
	}
}
