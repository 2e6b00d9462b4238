// Package editortest holds what the editors' end-to-end tests share: the
// model's scripted replies for a scenario every client plays through.
package editortest

import "github.com/ctxls/ctxls/chat/openaitest"

// ToolScenario is the model's side of the tool-call scenario the Neovim
// and Emacs tests play (the test MCP server as "t"): a session file
// written and echo allowed; add denied and fail failing; an echo nobody
// answers; two echoes and a slow call allowed always.
func ToolScenario() []openaitest.Reply {
	call := func(id, name, args string) openaitest.ToolCall {
		return openaitest.ToolCall{ID: id, Name: name, Arguments: args}
	}
	return []openaitest.Reply{
		{ToolCalls: []openaitest.ToolCall{
			call("w1", "write_file", `{"path":"results/notes.md","content":"hello"}`),
			call("c1", "mcp__t__echo", `{"text":"hi"}`)}},
		{Chunks: []string{"Echoed."}},
		{Chunks: []string{"Tool session"}}, // the title
		{ToolCalls: []openaitest.ToolCall{call("c2", "mcp__t__add", `{"a":1,"b":2}`), call("c3", "mcp__t__fail", `{}`)}},
		{Chunks: []string{"One was refused."}},
		{ToolCalls: []openaitest.ToolCall{call("c4", "mcp__t__echo", `{"text":"late"}`)}},
		{Chunks: []string{"No answer came."}},
		{ToolCalls: []openaitest.ToolCall{call("c5", "mcp__t__echo", `{"text":"a"}`), call("c6", "mcp__t__echo", `{"text":"b"}`),
			call("c7", "mcp__t__slow", `{"steps":3,"ms":150}`)}},
		{Chunks: []string{"Twice."}},
	}
}
