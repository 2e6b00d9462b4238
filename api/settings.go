package api

import (
	"encoding/json"
	"strconv"
	"strings"
)

// InitializationOptions are the LSP initialize's initializationOptions, every
// field optional. The ACP door takes provider and compactAt in initialize's
// _meta.ctxls; the CLI takes them as flags. A field whose JSON type the Go
// type does not say has its TypeScript type in a ts tag.
type InitializationOptions struct {
	// DataDir overrides the data directory for this connection.
	DataDir string `json:"dataDir,omitempty"`
	// Session is the id of a session to resume at start.
	Session string `json:"session,omitempty"`
	// Provider configures the model (see Provider).
	Provider json.RawMessage `json:"provider,omitempty" ts:"Provider"`
	// StorageSoftLimitMB is the data directory's soft limit in MiB (0: the
	// command line's, else the default).
	StorageSoftLimitMB int `json:"storageSoftLimitMB,omitempty"`
	// EnvHint replaces the environment line ctxls records for the sessions
	// this connection uses.
	EnvHint string `json:"envHint,omitempty"`
	// ViewIdleMs is how long the view must rest before it is captured
	// (1 to 3,600,000).
	ViewIdleMs json.RawMessage `json:"viewIdleMs,omitempty" ts:"number"`
	// CompactAt is when a turn summarises earlier turns: a percentage of the
	// window (1-100, or "80%") or "off".
	CompactAt json.RawMessage `json:"compactAt,omitempty" ts:"number | string"`
	// McpServers are MCP servers, in the format of the "mcpServers" object
	// of Claude Code's .mcp.json (see ctxls.mcp.list).
	McpServers json.RawMessage `json:"mcpServers,omitempty" ts:"Record<string, unknown>"`
	// WorkspaceMcpServers are MCP servers, in the same format, that come
	// from a place the workspace's repository controls (VS Code's
	// workspace settings, a .nvim.lua, a .dir-locals.el): they are used
	// only once the user trusted them as they are, as a workspace's
	// .mcp.json (see ctxls.mcp.trust); McpServers are the user's own.
	WorkspaceMcpServers json.RawMessage `json:"workspaceMcpServers,omitempty" ts:"Record<string, unknown>"`
	// AllowReadOnlyTools lets the model call MCP tools their server marks
	// read-only (readOnlyHint) without asking.
	AllowReadOnlyTools bool `json:"allowReadOnlyTools,omitempty"`
	// ToolPermissionTimeoutSeconds is how long a tool call waits for the
	// user's answer to its permission question or its edit's review
	// (default 120); then it does not run, and the model is told the
	// question was not answered.
	ToolPermissionTimeoutSeconds int `json:"toolPermissionTimeoutSeconds,omitempty"`
	// ReviewEdits: the client shows the model's edits itself when asked
	// with ctxls/reviewEdit (else the daemon asks with
	// window/showMessageRequest).
	ReviewEdits bool `json:"reviewEdits,omitempty"`
	// Diagnostics: the client answers ctxls/diagnostics with the editor's
	// diagnostics, and the model is offered the diagnostics tool.
	Diagnostics bool `json:"diagnostics,omitempty"`
	// Questions: the client shows the daemon's questions (tool permission,
	// workspace trust) as ctxls/question notifications in its chat and
	// answers with ctxls.question.answer (else the daemon asks with
	// window/showMessageRequest).
	Questions bool `json:"questions,omitempty"`
	// ProjectInstructions: the workspace's AGENTS.md files (else CLAUDE.md
	// or .github/copilot-instructions.md at a root) are given to the model
	// (absent: true).
	ProjectInstructions *bool `json:"projectInstructions,omitempty"`
}

// Settings are workspace/didChangeConfiguration's settings.ctxls: what an
// editor may change while the daemon runs. An absent field keeps its value;
// null (or "" for compactAt) goes back to the default.
type Settings struct {
	Provider           json.RawMessage `json:"provider,omitempty" ts:"Provider"`
	StorageSoftLimitMB json.RawMessage `json:"storageSoftLimitMB,omitempty" ts:"number | null"`
	ViewIdleMs         json.RawMessage `json:"viewIdleMs,omitempty" ts:"number"`
	CompactAt          json.RawMessage `json:"compactAt,omitempty" ts:"number | string | null"`
	McpServers         json.RawMessage `json:"mcpServers,omitempty" ts:"Record<string, unknown> | null"`
	// WorkspaceMcpServers as in InitializationOptions (absent: unchanged;
	// null: none).
	WorkspaceMcpServers json.RawMessage `json:"workspaceMcpServers,omitempty" ts:"Record<string, unknown> | null"`
	// AllowReadOnlyTools and ToolPermissionTimeoutSeconds as in
	// InitializationOptions (absent or null: unchanged).
	AllowReadOnlyTools           *bool `json:"allowReadOnlyTools,omitempty"`
	ToolPermissionTimeoutSeconds *int  `json:"toolPermissionTimeoutSeconds,omitempty"`
	// ProjectInstructions as in InitializationOptions (absent or null:
	// unchanged), from the next turn.
	ProjectInstructions *bool `json:"projectInstructions,omitempty"`
}

// DefaultToolPermissionTimeout is how long, in seconds, a tool call waits
// for the user's answer by default.
const DefaultToolPermissionTimeout = 120

// CompactAt values besides a percentage.
const (
	// DefaultCompactAt: compact when the input would take more than 80% of
	// the window (the context window less the output reserve).
	DefaultCompactAt = 80
	// CompactOff turns automatic compaction off; the oldest turns are left
	// out instead (ctxls.session.compact, /compact and ctxls sessions
	// compact still work).
	CompactOff = -1
)

// ParseCompactAt reads the compactAt setting: a whole percentage from 1 to
// 100 (a number, or a string such as "80" or "80%"), or "off". Absent or
// null gives 0 (the default, DefaultCompactAt).
func ParseCompactAt(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return checkCompactAt(n, string(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, compactAtError(string(raw))
	}
	return ParseCompactAtText(s)
}

// ParseCompactAtText is ParseCompactAt for a command-line flag or an
// environment variable: "80", "80%" or "off"; "" gives 0 (the default).
func ParseCompactAtText(s string) (int, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return 0, nil
	case "off":
		return CompactOff, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, compactAtError(s)
	}
	return checkCompactAt(n, s)
}

func checkCompactAt(n int, raw string) (int, error) {
	if n < 1 || n > 100 {
		return 0, compactAtError(raw)
	}
	return n, nil
}

func compactAtError(raw string) error {
	if len(raw) > 40 {
		raw = raw[:40] + "…"
	}
	return Errorf(KindInvalidArgument, "compactAt must be a percentage of the context window from 1 to 100, or \"off\", got %s", raw)
}
