package service

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
)

// MaxFileBytes is the largest file ctxls.files.add accepts (the store's).
const MaxFileBytes = session.MaxFileSize

// FilesAdd copies a file into the session's sources/ folder.
func (s *Service) FilesAdd(ctx context.Context, a *api.FilesAddArgs) (*api.FilesAddResult, error) {
	hasPath, hasContent := a.Path != "", a.Name != "" || a.ContentBase64 != ""
	switch {
	case hasPath && hasContent:
		return nil, api.Errorf(api.KindInvalidArgument, "%s: give either path, or name with contentBase64, not both", api.FilesAdd)
	case !hasPath && !hasContent:
		return nil, api.Errorf(api.KindInvalidArgument, "%s: give path, or name with contentBase64", api.FilesAdd)
	case hasContent && a.Name == "":
		return nil, required(api.FilesAdd, "name")
	}
	if n := decodedLen(a.ContentBase64); hasContent && n > MaxFileBytes {
		return nil, api.Errorf(api.KindTooLarge, "%s: %q is %s; the limit is %s (25 MiB)", api.FilesAdd, truncate(a.Name, 100), session.Bytes(n), session.Bytes(MaxFileBytes))
	}
	sess, err := s.sessionOf(ctx, a.SessionID, true)
	if err != nil {
		return nil, fail(err)
	}
	var info *session.FileInfo
	if hasPath {
		path := a.Path
		if p, ok := session.PathFromURI(path); ok {
			path = p
		}
		if !filepath.IsAbs(path) {
			roots := s.Roots()
			if len(roots) == 0 {
				return nil, api.Errorf(api.KindInvalidArgument, "%s: %q is relative and the editor gave no workspace folder; use an absolute path", api.FilesAdd, truncate(a.Path, 200))
			}
			path = filepath.Join(roots[0], path)
		}
		info, err = s.store.AddFileFromPath(ctx, sess.ID, path)
	} else {
		data, derr := base64.StdEncoding.DecodeString(a.ContentBase64)
		if derr != nil {
			return nil, api.Errorf(api.KindInvalidArgument, "%s: contentBase64 is not valid base64: %v", api.FilesAdd, derr)
		}
		info, err = s.store.AddFile(ctx, sess.ID, a.Name, bytes.NewReader(data))
	}
	if err != nil {
		return nil, fail(err)
	}
	s.publish(SessionFilesChanged{api.SessionFilesChangedParams{SessionID: sess.ID, Subdir: "sources", Name: info.Name, Size: info.Size, By: session.AddedByUser}})
	return &api.FilesAddResult{V: api.V, Name: info.Name, Size: info.Size}, nil
}

// FilesList lists one subfolder of the session folder.
func (s *Service) FilesList(ctx context.Context, a *api.FilesListArgs) (*api.FilesListResult, error) {
	sess, err := s.sessionOf(ctx, a.SessionID, false)
	if err != nil {
		return nil, fail(err)
	}
	res := &api.FilesListResult{V: api.V, Files: []string{}}
	if sess == nil {
		return res, nil
	}
	names, err := s.store.ListFiles(ctx, sess.ID, a.Subdir)
	if err != nil {
		return nil, fail(err)
	}
	res.Files = nonNil(names)
	return res, nil
}

// FilesRemove removes a file from the session's sources/ folder.
func (s *Service) FilesRemove(ctx context.Context, a *api.FilesRemoveArgs) (*api.FilesRemoveResult, error) {
	if a.Name == "" {
		return nil, required(api.FilesRemove, "name")
	}
	sess, err := s.existing(ctx, a.SessionID, api.FilesRemove)
	if err != nil {
		return nil, fail(err)
	}
	if err := s.store.RemoveFile(ctx, sess.ID, a.Name); err != nil {
		return nil, fail(err)
	}
	s.publish(SessionFilesChanged{api.SessionFilesChangedParams{SessionID: sess.ID, Subdir: "sources", Name: a.Name, By: session.AddedByUser, Removed: true}})
	return &api.FilesRemoveResult{V: api.V, Name: a.Name, Removed: true}, nil
}

// DocumentGet returns the text ctxls holds for an open document.
func (s *Service) DocumentGet(_ context.Context, a *api.DocumentGetArgs) (*api.DocumentGetResult, error) {
	if a.URI == "" {
		return nil, required(api.DocumentGet, "uri")
	}
	text, version, ok := s.docs.Text(a.URI)
	if !ok && s.docs.IsOpen(a.URI) {
		_, limit := s.docs.Held()
		return nil, api.Errorf(api.KindTooLarge, "%s: %s is open but its text is not held: open documents would take more than the limit of %d MiB", api.DocumentGet, truncate(a.URI, 200), limit>>20)
	}
	if !ok {
		return nil, api.Errorf(api.KindNotFound, "%s: %s is not open in the editor", api.DocumentGet, truncate(a.URI, 200))
	}
	return &api.DocumentGetResult{V: api.V, URI: a.URI, Version: version, Text: text}, nil
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

// FilesRead returns the text of a file of the session folder that
// ctxls.files.list names: never a hidden file, a folder or a link (each
// folder on the way is checked with Lstat), at most api.MaxReadBytes.
func (s *Service) FilesRead(ctx context.Context, a *api.FilesReadArgs) (*api.FilesReadResult, error) {
	if a.Name == "" {
		return nil, required(api.FilesRead, "name")
	}
	sub, err := session.CheckSubdir(a.Subdir)
	if err != nil {
		return nil, fail(err)
	}
	sess, err := s.existing(ctx, a.SessionID, api.FilesRead)
	if err != nil {
		return nil, fail(err)
	}
	names, err := s.store.ListFiles(ctx, sess.ID, sub)
	if err != nil {
		return nil, fail(err)
	}
	if !slices.Contains(names, a.Name) {
		return nil, api.Errorf(api.KindNotFound, "%s: %s/%s is not a file of the session folder", api.FilesRead, sub, truncate(a.Name, 200))
	}
	path := sess.Folder
	for _, part := range append([]string{sub}, strings.Split(a.Name, "/")...) {
		path = filepath.Join(path, part)
		fi, err := os.Lstat(path)
		if err != nil {
			return nil, fail(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, api.Errorf(api.KindInvalidArgument, "%s: %s/%s is a symbolic link; it is not read", api.FilesRead, sub, truncate(a.Name, 200))
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, api.Errorf(api.KindInvalidArgument, "%s: %s/%s is not a regular file", api.FilesRead, sub, truncate(a.Name, 200))
	}
	data, err := io.ReadAll(io.LimitReader(f, api.MaxReadBytes+1))
	if err != nil {
		return nil, fail(err)
	}
	res := &api.FilesReadResult{V: api.V, Subdir: sub, Name: a.Name, Size: fi.Size()}
	if len(data) > api.MaxReadBytes {
		data, res.Truncated = data[:api.MaxReadBytes], true
		for cut := 0; cut < utf8.UTFMax-1 && !utf8.Valid(data); cut++ { // a character cut at the end
			data = data[:len(data)-1]
		}
	}
	if !utf8.Valid(data) {
		res.Binary = true
		return res, nil
	}
	res.Content = string(data)
	return res, nil
}
