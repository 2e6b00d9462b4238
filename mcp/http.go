package mcp

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/ctxls/ctxls/api"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where the HTTP transport serves MCP.
const Path = "/mcp"

// serveHTTP serves srv as streamable HTTP on cfg.HTTP, a loopback address
// only: the sessions are private, and anything on the machine can reach a
// port. Every request must name localhost in Host (and in Origin, when a
// browser sends one: a web page the user opens could otherwise reach the
// port through DNS rebinding) and carry the bearer token.
func serveHTTP(ctx context.Context, srv *sdk.Server, cfg config, log *slog.Logger) int {
	host, _, err := net.SplitHostPort(cfg.HTTP)
	if err != nil || !loopback(host) {
		fmt.Fprintf(cfg.Stderr, "ctxls: --http %q: want a loopback address such as 127.0.0.1:8765 (the sessions are private)\n", cfg.HTTP)
		return 2
	}
	token := cfg.Token
	if token == "" {
		token = os.Getenv(api.MCPTokenEnv)
	}
	made := token == ""
	if made {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			fmt.Fprintf(cfg.Stderr, "ctxls: %v\n", err)
			return 1
		}
		token = hex.EncodeToString(b)
	}
	ln, err := net.Listen("tcp", cfg.HTTP)
	if err != nil {
		fmt.Fprintf(cfg.Stderr, "ctxls: %v\n", err)
		return 1
	}
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle(Path, guard(token, handler))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cfg.Stderr, "ctxls mcp: serving on http://%s%s\n", ln.Addr(), Path)
	if made {
		fmt.Fprintf(cfg.Stderr, "ctxls mcp: bearer token %s (set %s to choose one)\n", token, api.MCPTokenEnv)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("mcp http server", "err", err)
		return 1
	}
	return 0
}

// guard refuses a request whose Host or Origin is not localhost (403) or
// that lacks the bearer token (401) before it reaches MCP.
func guard(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "ctxls mcp: the Host header must name localhost", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || !loopbackHost(u.Host) {
				http.Error(w, "ctxls mcp: requests from other origins are refused", http.StatusForbidden)
				return
			}
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ctxls"`)
			http.Error(w, "ctxls mcp: a bearer token is required (see "+api.MCPTokenEnv+")", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header value (host[:port]) names this
// machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return loopback(host)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
