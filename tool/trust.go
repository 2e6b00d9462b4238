package tool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"
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

// TrustRequest asks whether to trust a workspace's .mcp.json.
type TrustRequest struct {
	Path    string
	Servers []string // "NAME: command args" or "NAME: url"
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
	sum := sha256.Sum256(data)
	w.hash = hex.EncodeToString(sum[:])
	w.servers, w.errs = mcpclient.Parse(data, path)
	for _, sv := range w.servers {
		w.Servers = append(w.Servers, sv.Name)
	}
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
	r := TrustRequest{Path: w.Path}
	for _, sv := range w.servers {
		what := sv.URL
		if sv.Type == "stdio" {
			what = strings.TrimSpace(sv.Command + " " + strings.Join(sv.Args, " "))
		}
		r.Servers = append(r.Servers, sv.Name+": "+what)
	}
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

// TrustQuestion is the question a door asks about a workspace file.
func TrustQuestion(r TrustRequest) string {
	return fmt.Sprintf("ctxls: %s configures MCP servers, which run on this machine: %s. Trust this file and let the model use them?",
		r.Path, strings.Join(r.Servers, "; "))
}
