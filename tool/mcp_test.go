package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTurnServersBounded: a turn with more than MaxServers servers (the
// connection's and a session's) uses MaxServers, says so in one warning,
// and a server in back-off is told of once, not on every turn.
func TestTurnServersBounded(t *testing.T) {
	var mu sync.Mutex
	var told []string
	b := New(BoxConfig{Getenv: func(string) string { return "" }, Notify: func(m string) {
		mu.Lock()
		told = append(told, m)
		mu.Unlock()
	}})
	defer b.Manager().Close()
	own, session := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for i := range 60 {
		own[fmt.Sprintf("a%02d", i)] = json.RawMessage(`{"command":"ctxls-no-such-command"}`)
		session[fmt.Sprintf("b%02d", i)] = json.RawMessage(`{"command":"ctxls-no-such-command-either"}`)
	}
	b.SetMCPServers(own)
	b.SetSessionMCPServers("s1", session, "session")
	turn := func() []string {
		mu.Lock()
		told = nil
		mu.Unlock()
		b.Turn("s1", false).mcpTools(context.Background(), nil, MaxTools, false)
		mu.Lock()
		defer mu.Unlock()
		return told
	}
	first := turn()
	var leftOut, failed int
	for _, m := range first {
		switch {
		case strings.Contains(m, "120 MCP servers are configured; a turn uses at most 64"):
			leftOut++
		case strings.Contains(m, "cannot be used in this turn"):
			failed++
		}
	}
	if leftOut != 1 || failed != 64 {
		t.Errorf("the first turn told %d messages: %d of servers left out, %d of failures; want 1 and 64", len(first), leftOut, failed)
	}
	turn() // the servers' back-off (1 s), told once
	time.Sleep(300 * time.Millisecond)
	if again := turn(); len(again) != 0 {
		t.Errorf("a turn within the back-off told %d messages again, e.g. %q", len(again), again[0])
	}
}
