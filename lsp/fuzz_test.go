package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/lsp/command"
)

// FuzzCommandArguments feeds arbitrary argument bytes to every command of a
// server with a real store. No input may panic or produce an internal error:
// bad input is the caller's mistake and must be answered -32602.
func FuzzCommandArguments(f *testing.F) {
	for i, c := range command.Commands {
		f.Add(uint8(i), []byte(c.ExampleArgs))
	}
	for _, seed := range []string{`{}`, `null`, `[]`, `"x"`, `{"sessionId":1}`, `{"items":[1,2]}`, `{"setName":"files","items":["../../etc/passwd"]}`,
		`{"name":"..","contentBase64":"eA=="}`, `{"limit":-1}`, `{"cursor":"\u0000"}`, `{"title":"\ud800"}`, `{"uri":"file:///%zz"}`, `{"a":1,"a":2}`} {
		f.Add(uint8(0), []byte(seed))
		f.Add(uint8(8), []byte(seed))
	}
	s := NewServer(Config{DataDir: f.TempDir(), Version: "fuzz"})
	ctx := context.Background()
	root := f.TempDir()
	if _, err := s.initialize(ctx, json.RawMessage(`{"rootUri":"file://`+root+`","capabilities":{}}`)); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.store.Close() })
	f.Fuzz(func(t *testing.T, which uint8, arg []byte) {
		c := command.Commands[int(which)%len(command.Commands)]
		if c.ID == command.SessionDelete || c.ID == command.Chat || c.ID == command.RegenerateTitle || c.ID == command.FilesAdd && strings.Contains(string(arg), "path") {
			// Keep the fuzzer from calling a model provider, deleting the store it
			// writes to or copying large system files.
			return
		}
		params, err := json.Marshal(map[string]any{"command": c.ID, "arguments": []json.RawMessage{normalizeJSON(arg)}})
		if err != nil {
			return
		}
		_, err = s.executeCommand(ctx, params)
		if err == nil {
			return
		}
		rpcErr := toRPCError(ctx, err)
		if rpcErr.Code != jsonrpc2.InvalidParams || rpcErr.Message == "" {
			t.Fatalf("%s %q: got code %d %q, want -32602 with a message", c.ID, arg, rpcErr.Code, rpcErr.Message)
		}
	})
}

// normalizeJSON turns arbitrary bytes into something json.Marshal accepts as
// a RawMessage: valid JSON stays, anything else becomes a JSON string.
func normalizeJSON(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}

// FuzzFraming feeds arbitrary bytes to the frame reader: it must never
// panic, never return a frame checkFrame rejects, and stop at the end of
// the input.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}   "))
	f.Add([]byte("Content-Length: 999999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: -1\r\n\r\nxx\r\n\r\nContent-Length: 3\r\n\r\n[1]"))
	f.Add([]byte("garbage\r\n\r\nContent-Length: 5\r\n\r\nnull!"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := newStream(bytes.NewReader(data), io.Discard, nil, slog.New(slog.DiscardHandler))
		st.limit = 1 << 10
		for range 1000 {
			body, _, err := st.ReadFrame(context.Background())
			if err != nil {
				return
			}
			if _, _, _, ok := checkFrame(body); !ok {
				t.Fatalf("ReadFrame returned a frame checkFrame rejects: %q", body)
			}
		}
	})
}
