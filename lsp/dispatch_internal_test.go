package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// wireClient is a minimal client over the same framing, for tests inside the
// package (lsptest imports lsp, so it cannot be used here).
type wireClient struct {
	t   *testing.T
	in  *stream // reads the server's output
	out io.Writer
}

func (c *wireClient) send(msg string) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.out, "Content-Length: %d\r\n\r\n%s", len(msg), msg); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next message the server sends.
func (c *wireClient) next() map[string]any {
	c.t.Helper()
	type res struct {
		m   map[string]any
		err error
	}
	ch := make(chan res, 1)
	go func() {
		body, _, err := c.in.readBody(context.Background())
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(body, &m)
		}
		ch <- res{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatal(r.err)
		}
		return r.m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message from the server within 10s")
	}
	return nil
}

// startWire runs a server with extra test commands on pipes.
func startWire(t *testing.T, extra map[string]commandFunc) (*wireClient, *Server) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := NewServer(service.Config{DataDir: t.TempDir(), Version: "test"})
	for id, fn := range extra {
		s.commands[id] = fn
	}
	done := make(chan struct{})
	go func() {
		s.Run(context.Background(), inR, outW)
		outW.Close()
		close(done)
	}()
	t.Cleanup(func() {
		inW.Close()
		<-done
	})
	c := &wireClient{t: t, in: newStream(outR, io.Discard, nil, slog.New(slog.DiscardHandler)), out: inW}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`)
	if m := c.next(); m["error"] != nil {
		t.Fatalf("initialize: %v", m["error"])
	}
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return c, s
}

// TestCancelRequest cancels a blocked command by numeric and by string id,
// while another request is answered in the meantime.
func TestCancelRequest(t *testing.T) {
	started := make(chan struct{}, 2)
	c, _ := startWire(t, map[string]commandFunc{
		"test.block": func(ctx context.Context, _ json.RawMessage) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	for _, id := range []string{`7`, `"seven"`} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"workspace/executeCommand","params":{"command":"test.block","arguments":[{}]}}`)
		<-started
		// A request behind the blocked one is served at once.
		c.send(`{"jsonrpc":"2.0","id":100,"method":"workspace/executeCommand","params":{"command":"ctxls.context.get","arguments":[{}]}}`)
		m := c.next()
		if fmt.Sprint(m["id"]) != "100" || m["error"] != nil {
			t.Fatalf("want the answer to 100 first, got %v", m)
		}
		c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`)
		m = c.next()
		b, _ := json.Marshal(m["id"])
		if string(b) != id {
			t.Fatalf("want the answer to %s, got %v", id, m)
		}
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32800) {
			t.Fatalf("cancelled request: want error -32800, got %v", m)
		}
	}
}

// TestHandlerPanic: a panicking command is answered -32603 and the
// connection keeps serving.
func TestHandlerPanic(t *testing.T) {
	c, _ := startWire(t, map[string]commandFunc{
		"test.panic": func(context.Context, json.RawMessage) (any, error) { panic("boom") },
	})
	for i := range 3 {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"workspace/executeCommand","params":{"command":"test.panic"}}`, i+1))
		m := c.next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32603) || !strings.Contains(fmt.Sprint(e["message"]), "boom") {
			t.Fatalf("panic: want -32603 mentioning the panic, got %v", m)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":9,"method":"workspace/executeCommand","params":{"command":"ctxls.context.get"}}`)
	if m := c.next(); m["error"] != nil {
		t.Fatalf("after panics: %v", m)
	}
}

// TestMalformedFrames: bad frames are answered with JSON-RPC errors and the
// connection goes on.
func TestMalformedFrames(t *testing.T) {
	c, _ := startWire(t, nil)
	for _, tc := range []struct {
		raw  string
		code float64
		id   any
	}{
		{`{not json`, -32700, nil},
		{`{"jsonrpc":"2.0","id":5}`, -32600, float64(5)},
		{`{"jsonrpc":"1.0","id":6,"method":"x"}`, -32600, float64(6)},
		{`{"id":7,"method":"shutdown"}`, -32600, float64(7)},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":8,"method":""}`, -32600, float64(8)},
		{`{"jsonrpc":"2.0","id":9,"method":"x","params":"str"}`, -32600, float64(9)},
		{`{"jsonrpc":"2.0","id":10,"method":42}`, -32600, float64(10)},
		{`[{"jsonrpc":"2.0","id":11,"method":"shutdown"}]`, -32600, nil},
		{`"just a string"`, -32600, nil},
		{`null`, -32600, nil},
	} {
		c.send(tc.raw)
		m := c.next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id {
			t.Errorf("%s: want error %v with id %v, got %v", tc.raw, tc.code, tc.id, m)
		}
	}
	// Broken headers and an oversize declaration.
	fmt.Fprintf(c.out, "Content-Length: abc\r\n\r\n")
	if m := c.next(); m["error"].(map[string]any)["code"] != float64(-32700) {
		t.Errorf("bad Content-Length: %v", m)
	}
	fmt.Fprintf(c.out, "Content-Type: x\r\n\r\n")
	if m := c.next(); m["error"].(map[string]any)["code"] != float64(-32700) {
		t.Errorf("missing Content-Length: %v", m)
	}
	// Oversize: declared beyond the limit; the body is skipped, not allocated.
	big := MaxMessageBytes + 10
	go func() {
		fmt.Fprintf(c.out, "Content-Length: %d\r\n\r\n", big)
		chunk := make([]byte, 1<<20)
		for sent := 0; sent < big; sent += len(chunk) {
			n := min(len(chunk), big-sent)
			if _, err := c.out.Write(chunk[:n]); err != nil {
				return
			}
		}
	}()
	m := c.next()
	if e := m["error"].(map[string]any); e["code"] != float64(-32600) || !strings.Contains(fmt.Sprint(e["message"]), "exceeds the limit") {
		t.Errorf("oversize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":99,"method":"workspace/executeCommand","params":{"command":"ctxls.context.get"}}`)
	if m := c.next(); m["error"] != nil || m["id"] != float64(99) {
		t.Fatalf("after malformed frames: %v", m)
	}
}

// TestFilesAddBase64TooLarge checks the size limit on inline content before
// it is decoded (sent through the wire, 35 MB of JSON is slow under -race).
func TestFilesAddBase64TooLarge(t *testing.T) {
	s := NewServer(service.Config{DataDir: t.TempDir()})
	if _, err := s.initialize(context.Background(), json.RawMessage(`{"capabilities":{}}`)); err != nil {
		t.Fatal(err)
	}
	defer s.svc.Close()
	big := strings.Repeat("A", (service.MaxFileBytes/3+2)*4)
	_, err := s.svc.FilesAdd(context.Background(), &api.FilesAddArgs{Name: "big.bin", ContentBase64: big})
	if err == nil || !strings.Contains(err.Error(), `"big.bin" is 26,214,405 bytes; the limit is 26,214,400 bytes (25 MiB)`) {
		t.Fatalf("want the exact sizes in the error, got %v", err)
	}
	exact := strings.Repeat("A", service.MaxFileBytes/3*4) // decodes to just under 25 MB
	if _, err := s.svc.FilesAdd(context.Background(), &api.FilesAddArgs{Name: "ok.bin", ContentBase64: exact}); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
}
