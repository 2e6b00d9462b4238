package service

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
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
	s.mu.Lock()
	s.mcpServers = m
	s.mu.Unlock()
	return nil
}

// sessionServers are the MCP servers a session was opened with, and the
// errors of those it cannot use.
type sessionServers struct {
	servers []mcpclient.Server
	errs    []string
}

// mcp is the connection's MCP servers' manager, made on first need.
func (s *Service) mcp() *mcpclient.Manager {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcpManager == nil {
		s.mcpManager = mcpclient.NewManager(s.version, s.log)
	}
	return s.mcpManager
}

// SetSessionMCPServers sets the MCP servers a session was opened with (an
// ACP client's mcpServers, in the "mcpServers" format: an object of servers
// by name), over the connection's own for that session's turns. It
// returns an error for each server it cannot use; the others are kept.
func (s *Service) SetSessionMCPServers(sessionID string, servers map[string]json.RawMessage, source string) []error {
	list, errs := mcpclient.ParseServers(servers, source)
	s.mu.Lock()
	if s.sessionMCP == nil {
		s.sessionMCP = map[string]sessionServers{}
	}
	s.sessionMCP[sessionID] = sessionServers{list, messages(errs)}
	s.mu.Unlock()
	return errs
}

// turnServers are the MCP servers of a session's turn: the connection's,
// then the session's own over them; with the configuration's errors.
func (s *Service) turnServers(ctx context.Context, sessionID string, ask bool) ([]mcpclient.Server, []string) {
	servers, errs, _ := s.servers(ctx, ask)
	s.mu.Lock()
	own := s.sessionMCP[sessionID]
	s.mu.Unlock()
	if len(own.servers) > 0 {
		servers, _ = mcpclient.Merge(servers, own.servers)
	}
	return servers, append(errs, own.errs...)
}

// servers is the connection's MCP configuration: the user's file, the
// workspace's trusted .mcp.json files, then the connection's own servers
// over them; with the errors of the servers it
// cannot use and a note for each server named twice.
// With ask, a workspace's .mcp.json the user has not decided about is
// asked about first (a turn's need); else it is left out (a listing).
func (s *Service) servers(ctx context.Context, ask bool) ([]mcpclient.Server, []string, []string) {
	var errs []string
	var fromFile []mcpclient.Server
	if path := mcpclient.UserConfig(s.getenv); path != "" {
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, path+": "+err.Error())
		default:
			var perrs []error
			fromFile, perrs = mcpclient.Parse(data, path)
			errs = append(errs, messages(perrs)...)
		}
	}
	s.mu.Lock()
	own := s.mcpServers
	s.mu.Unlock()
	fromWorkspace, werrs := s.workspaceServers(ctx, ask)
	errs = append(errs, werrs...)
	fromSettings, perrs := mcpclient.ParseServers(own, "settings")
	errs = append(errs, messages(perrs)...)
	servers, notes := mcpclient.Merge(fromFile, fromWorkspace, fromSettings)
	return servers, errs, notes
}

func messages(errs []error) []string {
	out := make([]string, len(errs))
	for i, err := range errs {
		out[i] = err.Error()
	}
	return out
}

// McpList lists the connection's MCP servers; with a.Tools, each is reached
// (at most four at once) and asked for its tools.
func (s *Service) McpList(ctx context.Context, a *api.MCPListArgs) (*api.MCPListResult, error) {
	servers, errs, notes := s.servers(ctx, false)
	res := &api.MCPListResult{V: api.V, Servers: make([]api.MCPServer, len(servers)), Errors: nonNil(errs), Notes: nonNil(notes), WorkspaceFiles: []api.MCPWorkspaceFile{}}
	for _, w := range s.workspaceFiles() {
		res.WorkspaceFiles = append(res.WorkspaceFiles, w.MCPWorkspaceFile)
	}
	m := s.mcp()
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
