//go:build deps

// Built with -tags deps, the minimal server links the libraries ctxls
// links (each package's initialisers run before main, and their code and
// tables are in the binary) and does nothing more with them: bench/run
// times it beside bench/minimal and ctxls, so the start-up figures say
// what the libraries cost a Go process by themselves and what ctxls's own
// start-up adds to that. TestDepsLinksWhatCtxlsLinks keeps the list whole.
package main

import (
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/anthropics/anthropic-sdk-go/v2/option"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/coder/acp-go-sdk"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/pkoukk/tiktoken-go-loader/assets"
	_ "github.com/sashabaranov/go-openai"
	_ "github.com/sourcegraph/conc/panics"
	_ "github.com/sourcegraph/conc/pool"
	_ "github.com/spf13/cobra"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "go.lsp.dev/uri"
	_ "modernc.org/sqlite"
)
