package e2e_test

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
// (pending: paused by t.Parallel, or waiting here) and that run; loads
// holds the load tests that wait, by name.
var kinds struct {
	mu               sync.Mutex
	cond             *sync.Cond
	pending, running map[string]int
	loads            map[string]bool
}

func init() {
	kinds.cond = sync.NewCond(&kinds.mu)
	kinds.pending, kinds.running, kinds.loads = map[string]int{}, map[string]int{}, map[string]bool{}
}

// loadOrder is the order the load tests start in, longest first (seconds
// each took alone on the 2-core machine: 24, 16, 14, 13, 12, 8, 8): two at
// a time, the short ones fill the end instead of a long one running last
// (the phase took 73 s with the longest started last). Load tests not
// listed start after these.
var loadOrder = []string{
	"TestBoundsOpenDocumentBudget",
	"TestFourDaemonsOneDataDir",
	"TestCommandAbuse",
	"TestBoundsClientNotReading",
	"TestFourDaemonsOnePostgres",
	"TestBoundsEditFlood",
	"TestCompactionOverLSP",
}

// loadRank is name's place in loadOrder (len(loadOrder) when not listed).
func loadRank(name string) int {
	for i, n := range loadOrder {
		if n == name {
			return i
		}
	}
	return len(loadOrder)
}

// firstLoad says whether no load test that comes before name in
// loadOrder is waiting. kinds.mu is held.
func firstLoad(name string) bool {
	r := loadRank(name)
	for other := range kinds.loads {
		if loadRank(other) < r {
			return false
		}
	}
	return true
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
	if kind == loadTests {
		kinds.loads[t.Name()] = true
	}
	kinds.mu.Unlock()
	t.Parallel()
	kinds.mu.Lock()
	for !mayRun(kind) || kind == loadTests && !firstLoad(t.Name()) {
		kinds.cond.Wait()
	}
	kinds.pending[kind]--
	kinds.running[kind]++
	if kind == loadTests {
		delete(kinds.loads, t.Name())
		kinds.cond.Broadcast() // the next load test may start beside this one
	}
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
