package lsp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// didChangeConfiguration takes settings.ctxls.provider,
// settings.ctxls.storageSoftLimitMB, settings.ctxls.viewIdleMs,
// settings.ctxls.compactAt, the MCP and tool settings and
// settings.ctxls.projectInstructions.
func (s *Server) didChangeConfiguration(raw json.RawMessage) error {
	var p struct {
		Settings struct {
			Ctxls api.Settings `json:"ctxls"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	s.setStorageLimit(svc, p.Settings.Ctxls.StorageSoftLimitMB)
	if idle, err := parseViewIdle(p.Settings.Ctxls.ViewIdleMs); err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
	} else if idle > 0 {
		s.view.setIdle(idle)
	}
	if at, err := api.ParseCompactAt(p.Settings.Ctxls.CompactAt); err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
	} else if raw := p.Settings.Ctxls.CompactAt; len(raw) > 0 && string(raw) != "null" {
		// "" puts the default back (an editor's empty setting); absent or
		// null keeps the current value.
		svc.SetCompactAt(at)
	}
	if raw := p.Settings.Ctxls.McpServers; len(raw) > 0 {
		if err := svc.SetMCPServers(raw); err != nil {
			s.showMessage(context.Background(), 2, "settings ignored: ctxls."+err.Error())
		}
	}
	if raw := p.Settings.Ctxls.WorkspaceMcpServers; len(raw) > 0 {
		if err := svc.SetWorkspaceMCPServers(raw); err != nil {
			s.showMessage(context.Background(), 2, "settings ignored: ctxls."+err.Error())
		}
	}
	s.setToolOptions(svc, p.Settings.Ctxls.AllowReadOnlyTools, p.Settings.Ctxls.ToolPermissionTimeoutSeconds)
	if on := p.Settings.Ctxls.ProjectInstructions; on != nil {
		svc.SetProjectInstructions(*on)
	}
	if len(p.Settings.Ctxls.Provider) == 0 {
		return nil
	}
	prov, err := api.ParseProvider(p.Settings.Ctxls.Provider)
	if err != nil {
		s.showMessage(context.Background(), 2, "settings ignored: "+err.Error())
		return err
	}
	svc.SetProvider(prov.Merge(s.cfg.Provider))
	return nil
}

// setStorageLimit takes settings.ctxls.storageSoftLimitMB: absent leaves
// the limit as it is, null or 0 goes back to the command line's or the
// default, a bad value is ignored with a warning.
func (s *Server) setStorageLimit(svc *service.Service, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var mb *int
	if err := json.Unmarshal(raw, &mb); err != nil || mb != nil && *mb < 0 {
		s.showMessage(context.Background(), 2, fmt.Sprintf("settings ignored: ctxls.storageSoftLimitMB is %s; want a whole number of MiB, at least 1 (or 0 for the default)", truncate(string(raw), 40)))
		return
	}
	limit := 0
	if mb != nil {
		limit = *mb
	}
	svc.SetStorageLimitMB(limit)
}
