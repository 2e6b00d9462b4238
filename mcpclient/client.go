package mcpclient

import (
	"context"
	"fmt"
	"io"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool is a tool a server offers.
type Tool struct {
	Name, Title, Description string
	InputSchema              any
	ReadOnly                 bool // the server says it changes nothing (readOnlyHint)
	Destructive              bool // it may destroy (destructiveHint; true unless the server says not)
}

// Connect starts the server (stdio: its command, its stderr to stderr) or
// reaches it (http, with its headers), and initializes an MCP session: a
// one-off connection (doctor, mcp list); turns use a Manager's.
func Connect(ctx context.Context, s Server, version string, stderr io.Writer) (*sdk.ClientSession, error) {
	t, err := transport(s, stderr)
	if err != nil {
		return nil, err
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ctxls", Version: version}, nil).Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", s.Name, err)
	}
	return cs, nil
}

// ListTools reaches the server, lists its tools and closes the session.
func ListTools(ctx context.Context, s Server, version string) ([]Tool, error) {
	cs, err := Connect(ctx, s, version, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var out []Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return out, fmt.Errorf("server %q: listing its tools: %w", s.Name, err)
		}
		out = append(out, toolOf(t))
	}
	return out, nil
}

// headers is a transport that adds a server's headers to each request.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}
