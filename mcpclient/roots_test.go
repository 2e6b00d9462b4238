package mcpclient_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/mcpclient"
)

// TestRoots: a server (Go SDK) that asks for the client's roots gets the
// folders SetRoots gave, as file URIs; a change reaches a running server
// (notifications/roots/list_changed) and its next listing.
func TestRoots(t *testing.T) {
	m := mcpclient.NewManager("test", nil)
	defer m.Close()
	s := mcpclient.Server{Name: "t", Command: testmcp.Binary(t), Args: []string{"-name", "t", "-roots"}}
	roots := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := m.Call(ctx, s, "roots", json.RawMessage(`{}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return mcpclient.Text(res)
	}
	m.SetRoots([]string{"/work/a b", "/work/c"})
	if got, want := roots(), "roots: file:///work/a%20b file:///work/c (list changed 0 times)"; got != want {
		t.Errorf("roots:\n got %q\nwant %q", got, want)
	}
	m.SetRoots([]string{"/work/c", "/work/d"})
	if got, want := roots(), "roots: file:///work/c file:///work/d (list changed 2 times)"; got != want {
		t.Errorf("roots after a change:\n got %q\nwant %q", got, want)
	}
}
