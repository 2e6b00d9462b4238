package tool

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/search"
	"github.com/ctxls/ctxls/workspace"
)

// The model finds its way in the workspace: grep, find_files and
// list_directory (package search does the work). They only read the
// workspace folders, so they run without asking; the editor's open
// buffers are searched with their unsaved text.

type grepArgs struct {
	Pattern      string `json:"pattern" jsonschema:"a regular expression (Go RE2 syntax), matched against each line"`
	Path         string `json:"path,omitempty" jsonschema:"a folder or file to search, relative to the workspace (default: every workspace folder)"`
	Glob         string `json:"glob,omitempty" jsonschema:"only files whose path matches this glob (** for any folders), e.g. **/*.go"`
	IgnoreCase   bool   `json:"ignore_case,omitempty" jsonschema:"match letters in either case"`
	ContextLines int    `json:"context_lines,omitempty" jsonschema:"lines of context to show before and after each match (at most 10)"`
}

var grepTool = define(Tool{
	Name: "grep",
	Kind: "search",
	Description: "Search the workspace's files for a regular expression (Go RE2 syntax). Returns the matching lines as path:line: text, grouped by file, paths relative to the workspace. " +
		"Searches the editor's open files as the user has them (unsaved edits included; a match only in unsaved text is marked), honours .gitignore and .ignore, skips binary and very large files. " +
		"At most 100 matches are shown; narrow with path or glob.",
	ReadOnly: true,
}, nil, func(ctx context.Context, c *Call, a grepArgs) (string, error) {
	if a.Pattern == "" {
		return "", errors.New("pattern is required")
	}
	opts, err := c.searchOptions(a.Path)
	if err != nil {
		return "", err
	}
	c.emit(chat.Activity{Message: "searching for " + a.Pattern})
	res, err := search.Grep(ctx, opts, search.GrepQuery{Pattern: a.Pattern, Glob: a.Glob, IgnoreCase: a.IgnoreCase, ContextLines: a.ContextLines}, overlayOf(c.TT.Buffers))
	if err != nil {
		return "", searchError(ctx, err)
	}
	c.Summarize(res.Summary())
	return res.String(), nil
})

type findFilesArgs struct {
	Pattern string `json:"pattern" jsonschema:"a glob: *.go matches at any depth, src/**/*_test.go a path under the workspace; {a,b} alternatives"`
	Path    string `json:"path,omitempty" jsonschema:"a folder to search in, relative to the workspace (default: every workspace folder)"`
}

var findFilesTool = define(Tool{
	Name:        "find_files",
	Kind:        "search",
	Description: "Find files in the workspace by a glob on their path (** for any number of folders). Returns paths relative to the workspace, most recently modified first; honours .gitignore and .ignore. At most 200 paths are shown.",
	ReadOnly:    true,
}, nil, func(ctx context.Context, c *Call, a findFilesArgs) (string, error) {
	if a.Pattern == "" {
		return "", errors.New("pattern is required")
	}
	opts, err := c.searchOptions(a.Path)
	if err != nil {
		return "", err
	}
	c.emit(chat.Activity{Message: "finding " + a.Pattern})
	res, err := search.Find(ctx, opts, a.Pattern)
	if err != nil {
		return "", searchError(ctx, err)
	}
	c.Summarize(res.Summary())
	return res.String(), nil
})

type listDirectoryArgs struct {
	Path string `json:"path,omitempty" jsonschema:"the folder, relative to the workspace (default: the workspace folder)"`
}

var listDirectoryTool = define(Tool{
	Name:        "list_directory",
	Kind:        "read",
	Description: "List a folder of the workspace: its folders (marked with a trailing /) and files with their sizes. Entries .gitignore or .ignore exclude are counted, not shown.",
	ReadOnly:    true,
}, nil, func(ctx context.Context, c *Call, a listDirectoryArgs) (string, error) {
	opts, err := c.searchOptions(a.Path)
	if err != nil {
		return "", err
	}
	res, err := search.List(ctx, opts)
	if err != nil {
		return "", searchError(ctx, err)
	}
	c.Summarize(res.Summary())
	return res.String(), nil
})

// searchOptions are where a search of the turn's may look, and what it
// must hold back: files whose name says they hold secrets, unless the
// user added them by name, and files holding a private key. A path with a
// control character is refused.
func (c *Call) searchOptions(path string) (search.Options, error) {
	if err := workspace.CheckPath(path); err != nil {
		return search.Options{}, err
	}
	tt := c.TT
	return search.Options{Roots: tt.Roots, Path: path, Withhold: func(p string) bool {
		return !tt.UserFiles[p] && workspace.SecretName(p)
	}, WithholdText: workspace.HasPrivateKey}, nil
}

// searchError is a search's error as the model is told it.
func searchError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("the search was cancelled")
	}
	return err
}

// overlayOf is the editor's text as a search sees it: the documents the
// door holds (an LSP editor's open buffers, an ACP client's embedded
// files), read once; nil when the door holds none.
func overlayOf(b chat.Buffers) search.Overlay {
	l, ok := b.(interface {
		EachText(func(path, text string) bool)
	})
	if !ok {
		return nil
	}
	m := mapOverlay{}
	l.EachText(func(p, t string) bool {
		m[p] = t
		return true
	})
	return m
}

// mapOverlay is texts by path.
type mapOverlay map[string]string

func (m mapOverlay) Each(fn func(path, text string) bool) {
	for p, t := range m {
		if !fn(p, t) {
			return
		}
	}
}

func (m mapOverlay) Text(path string) (string, bool) {
	t, ok := m[path]
	return t, ok
}
