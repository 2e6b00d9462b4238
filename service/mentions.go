package service

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/search"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// maxMentions caps the files one message's mentions send.
const maxMentions = 20

// mention is "@PATH" at the start of a message or after white space.
var mention = regexp.MustCompile(`(?:^|\s)@(\S+)`)

// withMentions is a turn's files: the ones the client sent, then each file
// the message mentions ("@auth/login.go", "@main.go:5-8") that is not
// among them, as turnFiles takes them.
func withMentions(files []string, message string, roots []string) []string {
	if !strings.Contains(message, "@") || len(roots) == 0 {
		return files
	}
	out := slices.Clone(files)
	n := 0
	for _, m := range mention.FindAllStringSubmatch(message, -1) {
		item, ok := mentionedFile(m[1], roots)
		if !ok || slices.Contains(out, item) {
			continue
		}
		out = append(out, item)
		if n++; n == maxMentions {
			break
		}
	}
	return out
}

// mentionedFile resolves a mention's PATH (lines optional) to the item a
// turn's files take, "/abs/path" or "/abs/path:5-8": a regular file
// inside a workspace folder (links resolved), not under .git, without a
// secret-looking name. Trailing punctuation of the sentence around it
// ("see @main.go, then") is not part of the name unless the file is
// named so.
func mentionedFile(raw string, roots []string) (string, bool) {
	for _, text := range []string{raw, strings.TrimRight(raw, ".,;:!?)]}'\"")} {
		name, lines := text, ""
		if m := lineRange.FindStringSubmatch(text); m != nil {
			name, lines = m[1], text[len(m[1]):]
		}
		for _, p := range mentionPaths(name, roots) {
			if mentionable(p, roots) {
				return p + lines, true
			}
		}
		if lines != "" {
			for _, p := range mentionPaths(text, roots) { // a file named "x:3"
				if mentionable(p, roots) {
					return p, true
				}
			}
		}
	}
	return "", false
}

// mentionPaths are the absolute paths name may mean: itself when
// absolute, else under each workspace folder (with several, also under the
// folder its first element names, as listings show paths).
func mentionPaths(name string, roots []string) []string {
	if name == "" {
		return nil
	}
	if filepath.IsAbs(name) {
		return []string{filepath.Clean(name)}
	}
	var out []string
	for _, r := range roots {
		out = append(out, filepath.Join(r, filepath.FromSlash(name)))
	}
	if len(roots) > 1 {
		if first, rest, ok := strings.Cut(name, "/"); ok {
			for _, r := range roots {
				if filepath.Base(r) == first {
					out = append(out, filepath.Join(r, filepath.FromSlash(rest)))
				}
			}
		}
	}
	return out
}

// mentionable: a file a mention may send (and ctxls.workspace.files may
// list).
func mentionable(p string, roots []string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if workspace.SecretName(p) || underGitDir(p) {
		return false
	}
	g := workspace.Guard{Roots: roots}
	return g.Refusal(p) == ""
}

// underGitDir: p is inside a .git folder.
func underGitDir(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), ".git")
}

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
	opts := search.Options{Roots: roots, Withhold: workspace.SecretName}
	seen := map[string]bool{}
	if a.Query == "" {
		// The open and recently edited files first.
		for _, p := range s.candidatePaths() {
			if len(res.Files) == limit {
				res.Truncated = true
				return res, nil
			}
			if rel, ok := relativeTo(p, roots); ok && mentionable(p, roots) && !seen[rel] {
				seen[rel] = true
				res.Files = append(res.Files, api.WorkspaceFile{Path: rel})
			}
		}
	}
	found, more, err := search.NamedFiles(ctx, opts, a.Query, limit+len(seen))
	if err != nil {
		return nil, fail(err)
	}
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
