package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/mcpclient"
)

// MCP servers in a workspace's settings (VS Code's .vscode/settings.json, a
// .nvim.lua, a .dir-locals.el) come from the repository as much as its
// .mcp.json does: the editor sends them apart (workspaceMcpServers), and
// they go through the same trust question, under a name standing for the
// settings of these workspace folders and the hash of the servers as
// configured.

// SetWorkspaceSettingsMCP sets the MCP servers of the workspace's settings
// (nil: none); they are used once the user trusted them.
func (s *Box) SetWorkspaceSettingsMCP(servers map[string]json.RawMessage) {
	s.mu.Lock()
	s.wsSettingsMCP = servers
	s.mu.Unlock()
}

// settingsFile is the workspace settings' servers as a workspace file,
// with its decision from decisions (nil: undecided); nil when there are
// none.
func (s *Box) settingsFile(decisions map[string]trustDecision) *workspaceFile {
	s.mu.Lock()
	servers := s.wsSettingsMCP
	s.mu.Unlock()
	if len(servers) == 0 {
		return nil
	}
	path := "the workspace settings of " + strings.Join(s.cfg.Roots(), ", ")
	if len(s.cfg.Roots()) == 0 {
		path = "the workspace settings"
	}
	// json.Marshal sorts the names and compacts each server, so the hash
	// is the configuration's, not its order's or spacing's.
	data, _ := json.Marshal(servers)
	sum := sha256.Sum256(data)
	w := &workspaceFile{MCPWorkspaceFile: api.MCPWorkspaceFile{Path: path, Servers: []string{}, State: api.TrustUndecided}, hash: hex.EncodeToString(sum[:])}
	w.servers, w.errs = mcpclient.ParseServers(servers, path)
	for _, sv := range w.servers {
		w.Servers = append(w.Servers, sv.Name)
	}
	if d, ok := decisions[path]; ok && d.SHA256 == w.hash {
		w.State = map[bool]string{true: api.TrustTrusted, false: api.TrustDistrusted}[d.Trusted]
	}
	return w
}
