// Package mcp is ctxls's MCP door: `ctxls mcp serve` offers the user's
// sessions to other agents (Claude Code, Codex, the Copilot CLI) as an MCP
// server over stdio, or streamable HTTP on a loopback port. Its tools call the
// same operations as the LSP and ACP doors and the CLI (package service) on
// the same store, PostgreSQL's row-level security included: search and list
// sessions, show one, get its relevant context, list and read its files, and
// (only with --write) set a context set; each session is also a resource,
// ctxls://session/{id}, its conversation as Markdown.
//
// The MCP plumbing is the official Go SDK's (github.com/modelcontextprotocol/
// go-sdk); http.go guards the HTTP transport.
package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// Options are what `ctxls mcp serve` starts from beyond the service's
// configuration (its DataDir, Store, Version and Log are used).
type Options struct {
	// Write offers the tools that change a session (set_context).
	Write bool
	// HTTP is the loopback address to serve streamable HTTP on ("" for
	// stdio); Token the bearer token it requires ("" makes one, printed on
	// Stderr).
	HTTP, Token string
	Stderr      io.Writer
}

// config is a server's whole configuration.
type config struct {
	service.Config
	Options
}

// SessionURI is the URI template of a session resource.
const SessionURI = "ctxls://session/{id}"

// Serve runs the server until the client goes away (stdio) or ctx ends, and
// returns the process exit code.
func Serve(ctx context.Context, in io.Reader, out io.Writer, c service.Config, o Options) int {
	cfg := config{c, o}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	svc, err := service.Open(ctx, service.Config{DataDir: cfg.DataDir, Store: cfg.Store, Log: log, NoEnvHint: true})
	if err != nil {
		fmt.Fprintf(cfg.Stderr, "ctxls: %v\n", err)
		return api.KindOf(err).Info().CLI
	}
	defer svc.Close()
	srv := newServer(svc, cfg)
	if cfg.HTTP != "" {
		return serveHTTP(ctx, srv, cfg, log)
	}
	err = srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	if err != nil && ctx.Err() == nil && err != io.EOF && !strings.Contains(err.Error(), "EOF") {
		log.Warn("mcp connection ended", "err", err)
	}
	return 0
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Tool inputs: a session is named by its id or a unique prefix of it (at
// least 4 characters), as the CLI takes them.
type (
	searchIn struct {
		Query string `json:"query" jsonschema:"words to find in titles and messages; the last one matches as a prefix"`
		Limit int    `json:"limit,omitempty" jsonschema:"at most this many hits (default 20)"`
	}
	listIn struct {
		Query  string `json:"query,omitempty" jsonschema:"only sessions whose title contains this"`
		Limit  int    `json:"limit,omitempty" jsonschema:"at most this many sessions (default 50)"`
		Cursor string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
	}
	// sessionIn names a session; the other inputs embed it.
	sessionIn struct {
		SessionID string `json:"sessionId" jsonschema:"the session's id, or a unique prefix of it (4 characters or more)"`
	}
	contextIn struct {
		sessionIn
		SetName string `json:"setName,omitempty" jsonschema:"one set (files, applet, endpoints, ports or another name); all sets when absent"`
	}
	filesIn struct {
		sessionIn
		Subdir string `json:"subdir,omitempty" jsonschema:"sources (the user's files, the default), results, scripts or data"`
	}
	readIn struct {
		sessionIn
		Subdir string `json:"subdir,omitempty" jsonschema:"sources (the default), results, scripts or data"`
		Name   string `json:"name" jsonschema:"the file's name as list_session_files gives it (sub/name below results, scripts and data)"`
	}
	setIn struct {
		sessionIn
		SetName string   `json:"setName" jsonschema:"the set: files (paths), applet, endpoints, ports, or another name"`
		Items   []string `json:"items" jsonschema:"the set's items; an empty list with mode replace deletes the set"`
		Mode    string   `json:"mode,omitempty" jsonschema:"replace (the default) or merge"`
	}
)

func (in sessionIn) session() string { return in.SessionID }

// tool adapts an operation to a tool's handler: a failed operation is the
// tool's error.
func tool[In, Out any](op func(context.Context, In) (*Out, error)) sdk.ToolHandlerFor[In, *Out] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, *Out, error) {
		r, err := op(ctx, in)
		return nil, r, toolError(err)
	}
}

// onSession is tool for an input that names a session: the id (or prefix)
// is resolved first.
func onSession[In interface{ session() string }, Out any](svc *service.Service, op func(ctx context.Context, id string, in In) (*Out, error)) sdk.ToolHandlerFor[In, *Out] {
	return tool(func(ctx context.Context, in In) (*Out, error) {
		if in.session() == "" {
			return nil, api.Errorf(api.KindInvalidArgument, "sessionId is required")
		}
		id, err := svc.ResolveID(ctx, in.session())
		if err != nil {
			return nil, err
		}
		return op(ctx, id, in)
	})
}

// newServer declares the tools and the session resource over svc.
func newServer(svc *service.Service, cfg config) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "ctxls", Version: cfg.Version}, &sdk.ServerOptions{
		Instructions: "ctxls keeps the user's chat sessions from their editors (VS Code, Neovim, Emacs, Zed, the terminal): " +
			"each with its messages, a title, named sets of relevant context (files the work is about, endpoints, ports) and a folder of files. " +
			"Search or list them to find what the user worked on, show one to read it.",
	})
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: "search_sessions", Annotations: readOnly,
		Description: "Full-text search over the user's session titles and messages; the most relevant hits, with the session's id and a snippet."},
		tool(func(ctx context.Context, in searchIn) (*api.SearchResult, error) {
			limit := in.Limit
			if limit == 0 {
				limit = 20
			}
			return svc.SessionSearch(ctx, &api.SessionSearchArgs{Query: in.Query, Limit: limit})
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_sessions", Annotations: readOnly,
		Description: "The user's sessions, most recent activity first: id, title, times, message and file counts, the folder it was used in."},
		tool(func(ctx context.Context, in listIn) (*api.SessionListResult, error) {
			return svc.SessionList(ctx, &api.SessionListArgs{Query: in.Query, Limit: in.Limit, Cursor: in.Cursor})
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "show_session", Annotations: readOnly,
		Description: "A session with all its messages, oldest first (a summary of earlier turns is a system message with summaryOf)."},
		onSession(svc, func(ctx context.Context, id string, _ sessionIn) (*api.ShowResult, error) {
			return svc.SessionShow(ctx, &api.SessionIDArgs{SessionID: id})
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "get_relevant_context", Annotations: readOnly,
		Description: "A session's relevant context: named sets such as files (absolute paths the work is about), applet (the user's view), endpoints, ports."},
		onSession(svc, func(ctx context.Context, id string, in contextIn) (*api.ContextGetResult, error) {
			return svc.ContextGet(ctx, &api.ContextGetArgs{SessionID: id, SetName: in.SetName})
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_session_files", Annotations: readOnly,
		Description: "The files in one folder of a session's folder: sources (the user's), results, scripts or data (the model's outputs)."},
		onSession(svc, func(ctx context.Context, id string, in filesIn) (*api.FilesListResult, error) {
			return svc.FilesList(ctx, &api.FilesListArgs{SessionID: id, Subdir: in.Subdir})
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "read_session_file", Annotations: readOnly,
		Description: "The text of a file in a session's folder (at most 1 MiB; a file that is not text is reported as binary)."},
		onSession(svc, func(ctx context.Context, id string, in readIn) (*api.FilesReadResult, error) {
			return svc.FilesRead(ctx, &api.FilesReadArgs{SessionID: id, Subdir: in.Subdir, Name: in.Name})
		}))
	if cfg.Write {
		destructive := true
		sdk.AddTool(srv, &sdk.Tool{Name: "set_relevant_context", Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true},
			Description: "Sets (replace) or extends (merge) one relevant-context set of a session, as the user's editor does; files are absolute paths."},
			onSession(svc, func(ctx context.Context, id string, in setIn) (*api.ContextSetResult, error) {
				items := in.Items
				if items == nil {
					items = []string{}
				}
				return svc.ContextSet(ctx, &api.ContextSetArgs{SessionID: id, SetName: in.SetName, Items: items, Mode: in.Mode})
			}))
	}
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name: "session", Title: "A ctxls session", URITemplate: SessionURI, MIMEType: "text/markdown",
		Description: "A session's conversation as Markdown: its title, relevant context and messages.",
	}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		id, ok := strings.CutPrefix(uri, "ctxls://session/")
		if !ok || id == "" {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		text, err := svc.SessionText(ctx, id)
		if api.KindOf(err) == api.KindNotFound {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
	})
	return srv
}

// toolError is a failed operation as the tool's error: its message with
// its kind, which the SDK hands the client as the result's isError text.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s (%s)", err.Error(), api.KindOf(err))
}
