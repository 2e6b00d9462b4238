package mcpclient

import (
	"sync"
	"time"
)

// progressEvery is the least time between two progress reports of a call
// passed on: a server may send thousands a second, the editor needs a few.
const progressEvery = 250 * time.Millisecond

// throttle passes a call's progress on to its reporter at most once per
// interval, the latest first: one that comes sooner waits for the interval
// to end, replacing any already waiting. After stop, nothing is passed on,
// so no progress ever follows the call's result.
type throttle struct {
	report   func(Progress)
	interval time.Duration

	// mu is held while a report is passed on, so stop waits for one in
	// flight; it guards the fields below.
	mu      sync.Mutex
	last    time.Time // when the last report was passed on
	pending *Progress // the latest report not passed on yet
	timer   *time.Timer
	stopped bool
}

func newThrottle(report func(Progress), interval time.Duration) *throttle {
	return &throttle{report: report, interval: interval}
}

// add is the server's progress notification.
func (t *throttle) add(p Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	wait := t.interval - time.Since(t.last)
	if wait <= 0 && t.pending == nil {
		t.last = time.Now()
		t.report(p)
		return
	}
	t.pending = &p
	if t.timer == nil {
		t.timer = time.AfterFunc(max(wait, 0), t.flush)
	}
}

// flush passes on the report waiting.
func (t *throttle) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer = nil
	if t.stopped || t.pending == nil {
		return
	}
	p := *t.pending
	t.pending = nil
	t.last = time.Now()
	t.report(p)
}

// stop ends the reports: a report waiting is dropped (the result, which
// follows at once, says more), and any that comes later too.
func (t *throttle) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.pending = nil
	if t.timer != nil {
		t.timer.Stop()
	}
}
