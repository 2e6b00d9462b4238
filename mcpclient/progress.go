package mcpclient

import (
	"sync"
	"time"
)

// A call's progress reports are passed on at most one per progressEvery,
// after a first progressBurst at once: a server may send thousands a
// second, the editor needs a few (and a short call's few steps all show).
const (
	progressEvery = 250 * time.Millisecond
	progressBurst = 4
)

// throttle passes a call's progress on to its reporter as a token bucket
// allows (progressBurst tokens, one more per interval): a report that comes
// with no token left waits for the next, replacing any already waiting, so
// the latest is the one passed on. stop passes on the one waiting, then
// nothing more: no progress ever follows the call's result.
type throttle struct {
	report   func(Progress)
	interval time.Duration

	// mu is held while a report is passed on, so stop waits for one in
	// flight and reports keep their order; it guards the fields below.
	mu       sync.Mutex
	tokens   float64
	refilled time.Time // when tokens was last brought up to date
	pending  *Progress // the latest report not passed on yet
	timer    *time.Timer
	stopped  bool
}

func newThrottle(report func(Progress), interval time.Duration) *throttle {
	return &throttle{report: report, interval: interval, tokens: progressBurst, refilled: time.Now()}
}

// refill adds the tokens earned since the last refill (t.mu held).
func (t *throttle) refill() {
	now := time.Now()
	t.tokens = min(progressBurst, t.tokens+float64(now.Sub(t.refilled))/float64(t.interval))
	t.refilled = now
}

// add is the server's progress notification.
func (t *throttle) add(p Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.refill()
	if t.tokens >= 1 && t.pending == nil {
		t.tokens--
		t.report(p)
		return
	}
	t.pending = &p
	if t.timer == nil {
		t.timer = time.AfterFunc(time.Duration((1-t.tokens)*float64(t.interval)), t.flush)
	}
}

// flush passes on the report waiting, its token come.
func (t *throttle) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timer = nil
	if t.stopped || t.pending == nil {
		return
	}
	t.refill()
	t.tokens = max(t.tokens-1, 0)
	p := *t.pending
	t.pending = nil
	t.report(p)
}

// stop ends the reports: the one waiting is passed on now (before the
// call returns, so before its result), any that comes later is dropped.
func (t *throttle) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending != nil && !t.stopped {
		t.report(*t.pending)
		t.pending = nil
	}
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
}
