// Package mcpclient is the client side of MCP in ctxls: the servers the user
// configures (in the format of Claude Code's .mcp.json) and the tools they
// offer. The service (package service) reads the configuration of a
// connection from here and reaches the servers through it.
package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds a call to a server's tool unless the server says
// otherwise (timeoutSeconds).
const DefaultTimeout = 60 * time.Second

// MaxServers is the most servers a configuration (a file, the settings, a
// session's) may name, and the most a turn uses: each may cost a process
// and a turn's wait.
const MaxServers = 64

// Server is one MCP server the user configured. The values of Env and
// Headers are secrets: never logged, stored or shown (their keys are).
type Server struct {
	Name    string
	Source  string // where it was configured: a file's path, or "settings"
	Type    string // "stdio" or "http"
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	Timeout time.Duration
}

// rawServer is one entry of "mcpServers", as Claude Code's .mcp.json has it,
// with ctxls's timeoutSeconds.
type rawServer struct {
	Type           string            `json:"type"`
	Command        string            `json:"command"`
	Args           []string          `json:"args"`
	Env            map[string]string `json:"env"`
	URL            string            `json:"url"`
	Headers        map[string]string `json:"headers"`
	TimeoutSeconds int               `json:"timeoutSeconds"`
}

// ConfigError is a server the configuration cannot use: it names the
// source, the server and the field. The other servers go on.
type ConfigError struct {
	Source, Server, Field, Problem string
}

func (e *ConfigError) Error() string {
	where := e.Source
	if e.Server != "" {
		where += ": server " + fmt.Sprintf("%q", e.Server)
	}
	if e.Field != "" {
		where += ", field " + e.Field
	}
	return where + ": " + e.Problem
}

// Parse reads a configuration, {"mcpServers": {"NAME": {...}}} (an empty
// document or "null" is none), from source. It returns the servers it can
// use, sorted by name, and an error for each it cannot.
func Parse(raw []byte, source string) ([]Server, []error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var doc struct {
		McpServers map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, []error{&ConfigError{Source: source, Problem: "not a {\"mcpServers\": {...}} object: " + strings.TrimPrefix(err.Error(), "json: ")}}
	}
	return ParseServers(doc.McpServers, source)
}

// ParseServers reads the "mcpServers" object itself (the settings'
// ctxls.mcpServers).
func ParseServers(servers map[string]json.RawMessage, source string) ([]Server, []error) {
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []Server
	var errs []error
	if len(names) > MaxServers {
		// One error for the lot: a thousand servers are not a thousand
		// warnings.
		errs = append(errs, &ConfigError{Source: source, Problem: fmt.Sprintf("%d servers are configured; at most %d are used: the ones from %q on are left out",
			len(names), MaxServers, truncate(names[MaxServers], 64))})
		names = names[:MaxServers]
	}
	for _, name := range names {
		s, err := parseServer(name, servers[name], source)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

func parseServer(name string, raw json.RawMessage, source string) (Server, error) {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Source: source, Server: name, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if name == "" || strings.ContainsAny(name, " /\\\x00") || len(name) > 64 {
		return Server{}, bad("", "a server's name is 1 to 64 characters without spaces or slashes")
	}
	var r rawServer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		msg := strings.TrimPrefix(err.Error(), "json: ")
		field := ""
		if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
			field, msg = strings.Trim(f, `"`), "unknown field (known: type, command, args, env, url, headers, timeoutSeconds)"
		}
		return Server{}, bad(field, "%s", msg)
	}
	s := Server{Name: name, Source: source, Type: r.Type, Command: r.Command, Args: r.Args, Env: r.Env, URL: r.URL, Headers: r.Headers, Timeout: DefaultTimeout}
	if r.TimeoutSeconds < 0 {
		return Server{}, bad("timeoutSeconds", "must not be negative, got %d", r.TimeoutSeconds)
	}
	if r.TimeoutSeconds > 0 {
		s.Timeout = time.Duration(r.TimeoutSeconds) * time.Second
	}
	if s.Type == "" {
		s.Type = "stdio"
		if r.URL != "" && r.Command == "" {
			s.Type = "http"
		}
	}
	switch s.Type {
	case "stdio":
		if r.Command == "" {
			return Server{}, bad("command", "is required for a stdio server")
		}
		if r.URL != "" || r.Headers != nil {
			return Server{}, bad("url", "a stdio server has a command, not a url or headers")
		}
	case "http":
		if r.Command != "" || r.Args != nil || r.Env != nil {
			return Server{}, bad("command", "an http server has a url, not a command, args or env")
		}
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Server{}, bad("url", "must be an http:// or https:// URL, got %q", truncate(r.URL, 100))
		}
	default:
		return Server{}, bad("type", "must be \"stdio\" or \"http\", got %q (sse is not supported)", truncate(r.Type, 20))
	}
	return s, nil
}

// Merge adds each list of servers to the ones before: a server named again
// replaces the earlier one. It returns the servers sorted by name and a line
// for each name that was replaced, saying which source won.
func Merge(lists ...[]Server) ([]Server, []string) {
	byName := map[string]Server{}
	var notes []string
	for _, list := range lists {
		for _, s := range list {
			if old, ok := byName[s.Name]; ok {
				notes = append(notes, fmt.Sprintf("server %q of %s is replaced by the one of %s", s.Name, old.Source, s.Source))
			}
			byName[s.Name] = s
		}
	}
	out := make([]Server, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return out, notes
}

// UserConfig is the user's own configuration file:
// $XDG_CONFIG_HOME/ctxls/mcp.json, else ~/.config/ctxls/mcp.json ("" when
// neither variable is set).
func UserConfig(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "ctxls", "mcp.json")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "ctxls", "mcp.json")
	}
	return ""
}

// Keys returns a map's keys, sorted: what may be shown of env and headers.
func Keys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
