package lsp_test

import (
	"os"
	"sync"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// Kinds of parallel test, and what may run beside them.
const (
	// timingTests check what happened within a window of time (the crash
	// suites: text streamed a checkpoint window plus crashSlack before a
	// kill must be saved). They leave most of the machine idle, and never
	// run beside a load test.
	timingTests = "timing"
	// loadTests keep the machine busy (hundreds of MB through a daemon, a
	// 2,000-message session, four daemons writing at once) and assert
	// nothing about time. At most maxLoad run at once, after the timing
	// tests.
	loadTests = "load"
	maxLoad   = 2
	// waitTests spend most of their time waiting (on daemons, timers, a
	// provider's retries, another process's stale age) and run beside
	// anything, at most maxWait at once.
	waitTests = "wait"
	maxWait   = 4
)

// kinds counts the parallel tests of each kind that wait for their turn
// (pending: paused by t.Parallel, or waiting here) and that run.
var kinds struct {
	mu               sync.Mutex
	cond             *sync.Cond
	pending, running map[string]int
}

func init() {
	kinds.cond = sync.NewCond(&kinds.mu)
	kinds.pending, kinds.running = map[string]int{}, map[string]int{}
}

// mayRun says whether a test of kind may start now. kinds.mu is held.
func mayRun(kind string) bool {
	switch kind {
	case timingTests:
		return kinds.running[loadTests] == 0
	case loadTests:
		return kinds.pending[timingTests] == 0 && kinds.running[timingTests] == 0 && kinds.running[loadTests] < maxLoad
	case waitTests:
		return kinds.running[waitTests] < maxWait
	}
	panic("unknown kind of test " + kind)
}

// parallel runs t in parallel (t.Parallel) once a test of its kind may
// run (mayRun). A test counts as pending from this call on, that is from
// the sequential part of the run, so the load tests know which timing
// tests are still to come.
func parallel(t *testing.T, kind string) {
	t.Helper()
	kinds.mu.Lock()
	kinds.pending[kind]++
	kinds.mu.Unlock()
	t.Parallel()
	kinds.mu.Lock()
	for !mayRun(kind) {
		kinds.cond.Wait()
	}
	kinds.pending[kind]--
	kinds.running[kind]++
	kinds.mu.Unlock()
	t.Cleanup(func() {
		kinds.mu.Lock()
		kinds.running[kind]--
		kinds.cond.Broadcast()
		kinds.mu.Unlock()
	})
}

// TestMain lets every parallel test be started at once (a test waiting
// for its kind holds its place among -test.parallel's too); how many run at
// once is parallel's business.
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 64)) }
