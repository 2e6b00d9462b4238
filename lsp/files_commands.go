package lsp

import (
	"bytes"
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// MaxFileBytes is the largest file ctxls.files.add accepts.
const MaxFileBytes = 25 << 20

func (s *Server) filesAdd(ctx context.Context, a *api.FilesAddArgs) (any, error) {
	hasPath, hasContent := a.Path != "", a.Name != "" || a.ContentBase64 != ""
	switch {
	case hasPath && hasContent:
		return nil, invalidParams("%s: give either path, or name with contentBase64, not both", api.FilesAdd)
	case !hasPath && !hasContent:
		return nil, invalidParams("%s: give path, or name with contentBase64", api.FilesAdd)
	case hasContent && a.Name == "":
		return nil, invalidParams("%s: name is required with contentBase64", api.FilesAdd)
	}
	if n := decodedLen(a.ContentBase64); hasContent && n > MaxFileBytes {
		return nil, invalidParams("%s: %q is %s; the limit is %s (25 MiB)", api.FilesAdd, truncate(a.Name, 100), session.Bytes(n), session.Bytes(MaxFileBytes))
	}
	store, id, err := s.sessionFor(ctx, a.SessionID, true)
	if err != nil {
		return nil, err
	}
	var info *session.FileInfo
	if hasPath {
		path := a.Path
		if p, ok := uriPath(path); ok {
			path = p
		}
		if !filepath.IsAbs(path) {
			s.mu.Lock()
			roots := s.roots
			s.mu.Unlock()
			if len(roots) == 0 {
				return nil, invalidParams("%s: %q is relative and the editor gave no workspace folder; use an absolute path", api.FilesAdd, truncate(a.Path, 200))
			}
			path = filepath.Join(roots[0], path)
		}
		info, err = store.AddFileFromPath(ctx, id, path)
	} else {
		data, derr := base64.StdEncoding.DecodeString(a.ContentBase64)
		if derr != nil {
			return nil, invalidParams("%s: contentBase64 is not valid base64: %v", api.FilesAdd, derr)
		}
		info, err = store.AddFile(ctx, id, a.Name, bytes.NewReader(data))
	}
	if err != nil {
		return nil, err
	}
	s.notifyFilesChanged(ctx, api.SessionFilesChangedParams{SessionID: id, Subdir: "sources", Name: info.Name, Size: info.Size, By: session.AddedByUser})
	return api.FilesAddResult{V: api.V, Name: info.Name, Size: info.Size}, nil
}

func (s *Server) filesList(ctx context.Context, a *api.FilesListArgs) (any, error) {
	store, id, err := s.sessionFor(ctx, a.SessionID, false)
	if err != nil {
		return nil, err
	}
	res := api.FilesListResult{V: api.V, Files: []string{}}
	if id == "" {
		return res, nil
	}
	names, err := store.ListFiles(ctx, id, a.Subdir)
	if err != nil {
		return nil, err
	}
	res.Files = nonNil(names)
	return res, nil
}

func (s *Server) filesRemove(ctx context.Context, a *api.FilesRemoveArgs) (any, error) {
	if a.Name == "" {
		return nil, invalidParams("%s: name is required", api.FilesRemove)
	}
	store, id, err := s.existingSession(ctx, a.SessionID, api.FilesRemove)
	if err != nil {
		return nil, err
	}
	if err := store.RemoveFile(ctx, id, a.Name); err != nil {
		return nil, err
	}
	s.notifyFilesChanged(ctx, api.SessionFilesChangedParams{SessionID: id, Subdir: "sources", Name: a.Name, By: session.AddedByUser, Removed: true})
	return api.FilesRemoveResult{V: api.V, Name: a.Name, Removed: true}, nil
}

// decodedLen is the number of bytes base64 text decodes to (for text that
// is valid base64; the decoder reports the rest).
func decodedLen(b64 string) int64 {
	n := int64(len(b64)) / 4 * 3
	switch {
	case strings.HasSuffix(b64, "=="):
		n -= 2
	case strings.HasSuffix(b64, "="):
		n--
	}
	return n
}
