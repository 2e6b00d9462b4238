package cli

import "testing"

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
