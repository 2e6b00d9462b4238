package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/mcpclient"
	"github.com/ctxls/ctxls/session"
)

// A workspace's .mcp.json can run commands, so its servers are used only
// once the user trusted the file as it is: the decision (trusted or not) is
// kept for this machine in the data directory with the file's SHA-256, and
// asked again when the content changes.

// trustFile is where the decisions are kept, in the data directory.
const trustFile = "mcp-trust.json"

// maxWorkspaceConfig is the largest .mcp.json read.
const maxWorkspaceConfig = 1 << 20

// TrustRequest asks whether to trust a workspace's .mcp.json: what each
// of its servers would run.
type TrustRequest struct {
	Path    string
	Servers []TrustServer
}

// TrustServer is what a workspace's server would run or reach.
type TrustServer struct {
	Name    string
	Type    string // "stdio" or "http"
	Command string
	Args    []string
	URL     string
	// Env is the environment it is given: every key, with its value when
	// the variable changes how code is loaded (Shown); others' values may
	// be secrets and are not shown.
	Env []EnvVar
	// HeaderKeys are the HTTP headers' names (their values may be secrets).
	HeaderKeys []string
	// Files are the files of the workspace it runs (its command, or a
	// script among its arguments), as "./scripts/x.sh": trusting the
	// .mcp.json trusts their content as it is now too.
	Files []string
}

// EnvVar is a variable of a server's environment.
type EnvVar struct {
	Key, Value string
	Shown      bool // Value is shown: it changes how code is loaded
}

// trustDecision is one file's decision.
type trustDecision struct {
	SHA256  string    `json:"sha256"`
	Trusted bool      `json:"trusted"`
	At      time.Time `json:"at"`
}

// trustMu serialises the daemon's reads and writes of the decisions.
var trustMu sync.Mutex

// SetWorkspaceMCP makes the connection use its workspace folders'
// .mcp.json files (once trusted): the LSP door's and the CLI's; an ACP
// client sends its servers itself.
func (s *Box) SetWorkspaceMCP(use bool) {
	s.mu.Lock()
	s.workspaceMCP = use
	s.mu.Unlock()
}

// workspaceFile is a workspace folder's .mcp.json as read now.
type workspaceFile struct {
	api.MCPWorkspaceFile
	hash    string
	servers []mcpclient.Server
	errs    []error
}

// workspaceFiles reads the workspace folders' .mcp.json files.
func (s *Box) workspaceFiles() []workspaceFile {
	s.mu.Lock()
	use := s.workspaceMCP
	s.mu.Unlock()
	if !use || s.cfg.Store == nil {
		return nil
	}
	decisions := s.trustDecisions()
	var out []workspaceFile
	for _, root := range s.cfg.Roots() {
		path := filepath.Join(root, ".mcp.json")
		w := readWorkspaceFile(path)
		if w == nil {
			continue
		}
		if w.State == "" {
			w.State = api.TrustUndecided
			if d, ok := decisions[path]; ok && d.SHA256 == w.hash {
				w.State = map[bool]string{true: api.TrustTrusted, false: api.TrustDistrusted}[d.Trusted]
			}
		}
		out = append(out, *w)
	}
	if w := s.settingsFile(decisions); w != nil {
		out = append(out, *w)
	}
	return out
}

// readWorkspaceFile reads and parses one file (nil when there is none).
func readWorkspaceFile(path string) *workspaceFile {
	w := &workspaceFile{MCPWorkspaceFile: api.MCPWorkspaceFile{Path: path, Servers: []string{}}}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err == nil && info.Size() > maxWorkspaceConfig:
		err = fmt.Errorf("it is %d bytes; the limit is %d", info.Size(), maxWorkspaceConfig)
	}
	var data []byte
	if err == nil {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		w.State, w.Error = api.TrustUnreadable, err.Error()
		return w
	}
	w.servers, w.errs = mcpclient.Parse(data, path)
	h := sha256.New()
	h.Write(data)
	for _, sv := range w.servers {
		w.Servers = append(w.Servers, sv.Name)
		// The files of the workspace a server runs are trusted as they
		// are now: their content is part of what the decision is about.
		for _, f := range workspaceFilesRun(filepath.Dir(path), sv) {
			fmt.Fprintf(h, "\x00%s\x00%s", f.rel, f.sum)
		}
	}
	// With no such file the hash is the file's own SHA-256, as it was
	// before files were hashed with it (decisions kept then still hold).
	w.hash = hex.EncodeToString(h.Sum(nil))
	return w
}

// trustDecisions reads the kept decisions (none when the file is missing
// or unreadable).
func (s *Box) trustDecisions() map[string]trustDecision {
	trustMu.Lock()
	defer trustMu.Unlock()
	return s.readTrust()
}

func (s *Box) readTrust() map[string]trustDecision {
	var doc struct {
		Files map[string]trustDecision `json:"files"`
	}
	data, err := os.ReadFile(filepath.Join(s.cfg.Store.DataDir(), trustFile))
	if err == nil {
		if err := json.Unmarshal(data, &doc); err != nil {
			s.log.Warn("the MCP trust decisions cannot be read; asking again", "err", err)
		}
	}
	if doc.Files == nil {
		doc.Files = map[string]trustDecision{}
	}
	return doc.Files
}

// decide keeps a decision about a file as it is (hash).
func (s *Box) decide(path, hash string, trusted bool) error {
	trustMu.Lock()
	defer trustMu.Unlock()
	files := s.readTrust()
	files[path] = trustDecision{SHA256: hash, Trusted: trusted, At: time.Now().UTC()}
	data, _ := json.MarshalIndent(map[string]any{"files": files}, "", "  ")
	return session.WriteFileAtomic(filepath.Join(s.cfg.Store.DataDir(), trustFile), data)
}

// workspaceServers are the servers of the workspace files the user
// trusted, with their configuration's errors; with ask, an undecided file
// is asked about first.
func (s *Box) workspaceServers(ctx context.Context, ask bool) ([]mcpclient.Server, []string) {
	var servers []mcpclient.Server
	var errs []string
	for _, w := range s.workspaceFiles() {
		if ask && w.State == api.TrustUndecided {
			w.State = s.askTrust(ctx, w)
		}
		switch w.State {
		case api.TrustTrusted:
			servers = append(servers, w.servers...)
			errs = append(errs, messages(w.errs)...)
		case api.TrustUnreadable:
			errs = append(errs, w.Path+": "+w.Error)
		}
	}
	return servers, errs
}

// askTrust asks the user about a file and keeps the answer; with no way
// to ask, the file stays undecided (and unused).
func (s *Box) askTrust(ctx context.Context, w workspaceFile) string {
	s.mu.Lock()
	ask := s.asker
	s.mu.Unlock()
	if ask == nil {
		return api.TrustUndecided
	}
	r := trustRequest(w.Path, w.servers)
	d, err := ask(ctx, PermissionRequest{Trust: &r})
	if err != nil {
		s.log.Info("the workspace's MCP servers are not used: the user was not asked", "path", w.Path, "err", err)
		return api.TrustUndecided
	}
	trusted := d == AllowOnce || d == AllowAlways
	if err := s.decide(w.Path, w.hash, trusted); err != nil {
		s.log.Warn("the trust decision was not kept", "path", w.Path, "err", err)
	}
	return map[bool]string{true: api.TrustTrusted, false: api.TrustDistrusted}[trusted]
}

// Trust trusts or distrusts a workspace's .mcp.json (path, or the folder
// holding it; absolute) as it is now, and returns where it stands.
func (s *Box) Trust(path string, trusted bool) (*api.MCPWorkspaceFile, error) {
	if s.cfg.Store == nil {
		return nil, api.Errorf(api.KindStoreUnavailable, "no data directory to keep the decision in")
	}
	w := s.settingsFile(nil)
	if w == nil || w.Path != path {
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			path = filepath.Join(path, ".mcp.json")
		}
		w = readWorkspaceFile(path)
	}
	switch {
	case w == nil:
		return nil, api.Errorf(api.KindNotFound, "%s does not exist", path)
	case w.State == api.TrustUnreadable:
		return nil, api.Errorf(api.KindInvalidArgument, "%s cannot be read: %s", path, w.Error)
	}
	if err := s.decide(path, w.hash, trusted); err != nil {
		return nil, api.Errorf(api.KindInternal, "keeping the decision: %v", err)
	}
	w.State = map[bool]string{true: api.TrustTrusted, false: api.TrustDistrusted}[trusted]
	return &w.MCPWorkspaceFile, nil
}

// WorkspaceFiles are the workspace folders' .mcp.json files and where each
// stands.
func (s *Box) WorkspaceFiles() []api.MCPWorkspaceFile {
	var out []api.MCPWorkspaceFile
	for _, w := range s.workspaceFiles() {
		out = append(out, w.MCPWorkspaceFile)
	}
	return out
}

// trustRequest is the question about a workspace file's servers.
func trustRequest(path string, servers []mcpclient.Server) TrustRequest {
	r := TrustRequest{Path: path}
	for _, sv := range servers {
		ts := TrustServer{Name: sv.Name, Type: sv.Type, Command: sv.Command, Args: sv.Args, URL: sv.URL}
		for _, k := range slices.Sorted(maps.Keys(sv.Env)) {
			shown := loadsCode(k)
			v := ""
			if shown {
				v = sv.Env[k]
			}
			ts.Env = append(ts.Env, EnvVar{Key: k, Value: v, Shown: shown})
		}
		ts.HeaderKeys = slices.Sorted(maps.Keys(sv.Headers))
		for _, f := range workspaceFilesRun(filepath.Dir(path), sv) {
			ts.Files = append(ts.Files, f.rel)
		}
		r.Servers = append(r.Servers, ts)
	}
	return r
}

// loadsCode reports whether an environment variable changes which code a
// program loads or runs (its value is shown in the trust question).
func loadsCode(key string) bool {
	k := strings.ToUpper(key)
	switch {
	case strings.HasSuffix(k, "_OPTIONS"), strings.HasSuffix(k, "OPT"), strings.HasSuffix(k, "OPTS"),
		strings.HasPrefix(k, "LD_"), strings.HasPrefix(k, "DYLD_"),
		strings.HasSuffix(k, "PATH"), strings.HasSuffix(k, "LIB"), strings.HasSuffix(k, "HOME"):
		// NODE_OPTIONS, JAVA_TOOL_OPTIONS, RUBYOPT, PERL5OPT, MAVEN_OPTS,
		// LD_PRELOAD, DYLD_INSERT_LIBRARIES, PATH, PYTHONPATH, NODE_PATH,
		// CLASSPATH, GEM_PATH, PERL5LIB, RUBYLIB, PYTHONHOME, JAVA_HOME, …
		return true
	}
	switch k {
	case "PYTHONSTARTUP", "BASH_ENV", "ENV", "ZDOTDIR", "PROMPT_COMMAND", "SHELLOPTS", "PS4",
		"NODE_EXTRA_CA_CERTS", "PYTHONINSPECT", "PYTHONWARNINGS", "PYTHONBREAKPOINT", "GIT_SSH_COMMAND",
		"GIT_EXEC_PATH", "GCONV_PATH", "MALLOC_CONF", "IFS":
		return true
	}
	return false
}

// runFile is a file of the workspace a server runs, and its content's
// SHA-256.
type runFile struct{ rel, sum string }

// workspaceFilesRun are the files inside root (the .mcp.json's folder) a
// stdio server runs: its command, and each argument naming a regular file
// there (a script: "node ./x.js", "bash scripts/x.sh"), relative paths
// taken from root.
func workspaceFilesRun(root string, sv mcpclient.Server) []runFile {
	if sv.Type != "stdio" {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil
	}
	var out []runFile
	for i, a := range append([]string{sv.Command}, sv.Args...) {
		if a == "" || i == 0 && !strings.ContainsRune(a, filepath.Separator) && !strings.ContainsRune(a, '/') {
			continue // a command without a slash is looked up in PATH
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(realRoot, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		info, err := os.Stat(real)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(real)
		if err != nil {
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			continue
		}
		rel = "./" + filepath.ToSlash(rel)
		if !slices.ContainsFunc(out, func(f runFile) bool { return f.rel == rel }) {
			out = append(out, runFile{rel: rel, sum: hex.EncodeToString(h.Sum(nil))})
		}
	}
	return out
}

// TrustQuestion is the question a door asks about a workspace file, in one
// line: each server's command, arguments and environment (or its URL and
// headers' names), and the files of the workspace it runs. Everything that
// came from the file is shown escaped (termsafe.Line).
func TrustQuestion(r TrustRequest) string {
	return fmt.Sprintf("ctxls: %s configures MCP servers, which run on this machine: %s. Trust what it configures and let the model use these servers?",
		termsafe.Line(r.Path), strings.Join(TrustServers(r), "; "))
}

// TrustServers are the trust question's servers, each in a line: what it
// runs (command, arguments, environment) or reaches, and the files of the
// workspace it runs; escaped.
func TrustServers(r TrustRequest) []string {
	servers := make([]string, len(r.Servers))
	for i, sv := range r.Servers {
		var b strings.Builder
		b.WriteString(termsafe.Line(sv.Name) + ": ")
		if sv.Type == "stdio" {
			words := make([]string, 0, 1+len(sv.Args))
			for _, a := range append([]string{sv.Command}, sv.Args...) {
				words = append(words, shellWord(a))
			}
			b.WriteString(strings.Join(words, " "))
		} else {
			b.WriteString(termsafe.Line(sv.URL))
		}
		var notes []string
		if len(sv.Env) > 0 {
			env := make([]string, len(sv.Env))
			for j, e := range sv.Env {
				env[j] = termsafe.Line(e.Key)
				if e.Shown {
					env[j] += "=" + shellWord(e.Value)
				}
			}
			notes = append(notes, "env "+strings.Join(env, ", "))
		}
		if len(sv.HeaderKeys) > 0 {
			notes = append(notes, "headers "+strings.Join(termsafe.Lines(sv.HeaderKeys), ", "))
		}
		if len(sv.Files) > 0 {
			notes = append(notes, "runs a file of this repository: "+strings.Join(termsafe.Lines(sv.Files), ", "))
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, "; ") + ")")
		}
		servers[i] = b.String()
	}
	return servers
}

// WorkspaceTrustRequest is what trusting a workspace's .mcp.json (path)
// as it is now would trust (false when it cannot be read).
func WorkspaceTrustRequest(path string) (TrustRequest, bool) {
	w := readWorkspaceFile(path)
	if w == nil || w.State == api.TrustUnreadable {
		return TrustRequest{}, false
	}
	return trustRequest(path, w.servers), true
}

// shellWord is a command's word as a shell would need it: quoted when it
// is empty or holds a space or quote, and escaped (termsafe.Line).
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \"'") {
		return termsafe.Line(s)
	}
	return `"` + termsafe.Line(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)) + `"`
}
