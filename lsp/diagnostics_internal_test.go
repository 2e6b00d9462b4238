package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
)

// TestDiagnosticsDoorWait: the door sends waitMs and waits for the answer
// waitMs plus the grace, so an editor that waits for a language server
// answers in time; an editor that never answers gives up after the grace
// (no wait), with a sentence saying so; a client without the flag is never
// asked. (Each case takes about 5 s: the grace is the daemon's own.)
func TestDiagnosticsDoorWait(t *testing.T) {
	t.Parallel()
	ask := func(t *testing.T, answers bool, uris []string, wait time.Duration) (*wireClient, chan error, chan []api.FileDiagnostics) {
		c, s := startWire(t, nil)
		s.mu.Lock()
		s.diagnostics = answers
		s.mu.Unlock()
		errs, got := make(chan error, 1), make(chan []api.FileDiagnostics, 1)
		go func() {
			files, err := lspDiagnostics{s}.Diagnostics(context.Background(), uris, wait)
			errs <- err
			got <- files
		}()
		return c, errs, got
	}
	t.Run("waits waitMs plus the grace", func(t *testing.T) {
		t.Parallel()
		c, errs, got := ask(t, true, []string{"file:///w/main.go"}, time.Second)
		m := c.next()
		params, _ := json.Marshal(m["params"])
		if m["method"] != api.Diagnostics || string(params) != `{"uris":["file:///w/main.go"],"waitMs":1000}` {
			t.Fatalf("the request: %v %s", m["method"], params)
		}
		// Later than the grace alone, within waitMs plus it.
		time.Sleep(diagnosticsGrace + 300*time.Millisecond)
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":[{"uri":"file:///w/main.go","diagnostics":[{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}},"severity":1,"code":7,"message":"bad"}]}]}`, m["id"]))
		if err := <-errs; err != nil {
			t.Fatalf("an answer within waitMs + %s: %v", diagnosticsGrace, err)
		}
		files := <-got
		if len(files) != 1 || len(files[0].Diagnostics) != 1 || files[0].Diagnostics[0].Message != "bad" || string(files[0].Diagnostics[0].Code) != "7" ||
			files[0].Diagnostics[0].Range.Start.Line != 1 {
			t.Errorf("the answer: %+v", files)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		t.Parallel()
		c, errs, _ := ask(t, true, nil, 0)
		start := time.Now()
		m := c.next()
		params, _ := json.Marshal(m["params"])
		if string(params) != `{}` {
			t.Errorf("params without uris or wait: %s", params)
		}
		select {
		case err := <-errs:
			took := time.Since(start)
			if err == nil || err.Error() != "the editor did not answer ctxls/diagnostics within 5s" || took < diagnosticsGrace-100*time.Millisecond || took > diagnosticsGrace+2*time.Second {
				t.Errorf("after %s: %v", took, err)
			}
		case <-time.After(diagnosticsGrace + 5*time.Second):
			t.Fatal("the door did not give up")
		}
	})
	t.Run("a client without the flag", func(t *testing.T) {
		t.Parallel()
		c, errs, _ := ask(t, false, nil, time.Second)
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "initializationOptions.diagnostics") {
			t.Errorf("err %v", err)
		}
		// The next message the client reads is the answer to a request of
		// its own, not ctxls/diagnostics.
		c.send(`{"jsonrpc":"2.0","id":99,"method":"shutdown"}`)
		if m := c.next(); m["id"] != float64(99) {
			t.Errorf("the client got %v", m)
		}
	})
}
