package service

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/mcpclient"
)

// listToolsTimeout bounds how long ctxls.mcp.list waits for one server.
const listToolsTimeout = 20 * time.Second

// SetMCPServers sets the connection's own MCP servers: the "mcpServers"
// object of initializationOptions or settings (null or absent: none). A
// value that is not an object is an invalid argument; a bad server in it is
// reported by ctxls.mcp.list, the others are kept.
func (s *Service) SetMCPServers(raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return api.Errorf(api.KindInvalidArgument, "mcpServers must be an object of servers by name")
		}
	}
	s.box.SetMCPServers(m)
	return nil
}

// SetWorkspaceMCPServers sets the MCP servers of the workspace's settings
// (initializationOptions or settings workspaceMcpServers; null or absent:
// none): as SetMCPServers, but used only once the user trusted them.
func (s *Service) SetWorkspaceMCPServers(raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return api.Errorf(api.KindInvalidArgument, "workspaceMcpServers must be an object of servers by name")
		}
	}
	s.box.SetWorkspaceSettingsMCP(m)
	return nil
}

// McpList lists the connection's MCP servers; with a.Tools, each is reached
// (at most four at once) and asked for its tools.
func (s *Service) McpList(ctx context.Context, a *api.MCPListArgs) (*api.MCPListResult, error) {
	servers, errs, notes := s.box.Servers(ctx, false)
	res := &api.MCPListResult{V: api.V, Servers: make([]api.MCPServer, len(servers)), Errors: nonNil(errs), Notes: nonNil(notes), WorkspaceFiles: nonNil(s.box.WorkspaceFiles())}
	m := s.box.Manager()
	p := pool.New().WithMaxGoroutines(4)
	for i, sv := range servers {
		res.Servers[i] = api.MCPServer{
			Name: sv.Name, Source: sv.Source, Type: sv.Type, Command: sv.Command, Args: sv.Args, URL: sv.URL,
			EnvKeys: mcpclient.Keys(sv.Env), HeaderKeys: mcpclient.Keys(sv.Headers), TimeoutSeconds: int(sv.Timeout / time.Second),
		}
		if !a.Tools {
			continue
		}
		out := &res.Servers[i]
		p.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, listToolsTimeout)
			defer cancel()
			tools, err := m.Tools(ctx, sv)
			if err != nil {
				out.Error = err.Error()
			}
			if left := m.LeftOut(sv); err == nil && left.Count > 0 {
				out.ToolsLeftOut, out.LeftOutReasons = left.Count, left.Reasons
			}
			out.Tools = make([]api.MCPTool, len(tools))
			for j, t := range tools {
				out.Tools[j] = api.MCPTool{Name: t.Name, Description: t.Description, ReadOnly: t.ReadOnly}
			}
		})
	}
	p.Wait()
	for i, sv := range servers {
		res.Servers[i].Running = m.IsRunning(sv)
	}
	return res, nil
}

// McpTrust trusts or distrusts a workspace's .mcp.json as it is now.
func (s *Service) McpTrust(ctx context.Context, a *api.MCPTrustArgs) (*api.MCPTrustResult, error) {
	if a.Path == "" {
		return nil, required(api.MCPTrust, "path")
	}
	path, err := filepath.Abs(a.Path)
	if err != nil {
		return nil, api.Errorf(api.KindInvalidArgument, "path: %v", err)
	}
	w, err := s.box.Trust(path, a.Trust)
	if err != nil {
		return nil, err
	}
	return &api.MCPTrustResult{V: api.V, MCPWorkspaceFile: *w}, nil
}
