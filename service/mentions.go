package service

import (
	"context"
	"path/filepath"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/search"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// WorkspaceFiles lists the workspace's files for a completion after "@".
func (s *Service) WorkspaceFiles(ctx context.Context, a *api.WorkspaceFilesArgs) (*api.WorkspaceFilesResult, error) {
	limit := a.Limit
	if limit <= 0 {
		limit = 50
	}
	res := &api.WorkspaceFilesResult{V: api.V, Files: []api.WorkspaceFile{}}
	roots := s.Roots()
	if len(roots) == 0 {
		return res, nil
	}
	seen := map[string]bool{}
	if a.Query == "" {
		// The open and recently edited files first.
		for _, p := range s.candidatePaths() {
			if len(res.Files) == limit {
				res.Truncated = true
				return res, nil
			}
			if rel, ok := relativeTo(p, roots); ok && workspace.Mentionable(p, roots) && !seen[rel] {
				seen[rel] = true
				res.Files = append(res.Files, api.WorkspaceFile{Path: rel})
			}
		}
	}
	all, err := s.names.Get(ctx, search.Options{Roots: roots, Withhold: workspace.SecretName})
	if err != nil {
		return nil, fail(err)
	}
	found, more := search.RankNames(all, a.Query, limit+len(seen))
	for _, f := range found {
		if seen[f.Path] {
			continue
		}
		if len(res.Files) == limit {
			more = true
			break
		}
		res.Files = append(res.Files, api.WorkspaceFile{Path: f.Path})
	}
	res.Truncated = more
	return res, nil
}

// relativeTo is p as listings show it: relative to its workspace folder
// (starting with the folder's name when there are several).
func relativeTo(p string, roots []string) (string, bool) {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && session.Within(p, r) {
			rel = filepath.ToSlash(rel)
			if len(roots) > 1 {
				rel = filepath.Base(r) + "/" + rel
			}
			return rel, true
		}
	}
	return "", false
}
