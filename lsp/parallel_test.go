package lsp_test

import (
	"sync"
	"testing"
)

// Kinds of test that run in parallel with the tests of their kind only.
const (
	// timingTests check what happened within a window of time (the crash
	// suites: text streamed a checkpoint window plus crashSlack before a
	// kill must be saved). They leave most of the machine idle.
	timingTests = "timing"
	// loadTests keep the machine busy (hundreds of MB through a daemon, a
	// 2,000-message session) and assert nothing about time.
	loadTests = "load"
)

// kinds is which kind of test runs now, and how many of it.
var kinds struct {
	mu      sync.Mutex
	cond    *sync.Cond
	kind    string
	running int
}

func init() { kinds.cond = sync.NewCond(&kinds.mu) }

// parallel runs t in parallel (t.Parallel) beside tests of the same kind
// only: it waits while tests of another kind run.
func parallel(t *testing.T, kind string) {
	t.Helper()
	t.Parallel()
	kinds.mu.Lock()
	for kinds.running > 0 && kinds.kind != kind {
		kinds.cond.Wait()
	}
	kinds.kind = kind
	kinds.running++
	kinds.mu.Unlock()
	t.Cleanup(func() {
		kinds.mu.Lock()
		if kinds.running--; kinds.running == 0 {
			kinds.kind = ""
			kinds.cond.Broadcast()
		}
		kinds.mu.Unlock()
	})
}
