// Package fakeprovider is what the fake LLM providers (chat/openaitest,
// chat/anthropictest) have in common: the scripted replies and the default
// one, the recorded requests and the waits on them, the API key, the
// server's life, and the plumbing of a streamed answer (SSE framing, split
// writes, holds released by Release, delays, where a fault strikes,
// connection resets and stalls; stream.go). Each fake keeps its provider's
// wire format to itself: what it checks of a request, its JSON, its event
// names, its error bodies and usage figures, and its public types.
package fakeprovider

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Marks are where a fake's Request keeps what the core records of it.
type Marks struct {
	Stream      bool // the request asked for a streamed answer
	FinishedAt  *time.Time
	Cancelled   *bool
	CancelledAt *time.Time
}

// Core holds a fake's replies (R, its Reply type) and the requests it
// received (Q, its Request type).
type Core[R, Q any] struct {
	// T is the test the server lives for.
	T testing.TB
	// Default, Models, Key and Route are the fake's options, set before
	// Serve: the reply when nothing else answers, what the models list
	// names, the API key required ("" none), and a reply for requests it
	// picks out ahead of the queue (nil none).
	Default R
	Models  []string
	Key     string
	Route   func(*Q) (R, bool)

	name    string
	marks   func(*Q) Marks
	done    chan struct{} // closed when the test ends
	release chan struct{} // one value per Release, taken by a held stream

	// mu guards queue, reqs (and the requests they point to) and changed.
	mu      sync.Mutex
	queue   []R
	reqs    []*Q
	changed chan struct{} // closed and replaced when anything is recorded
}

// New makes the core of the fake called name (it begins its failures),
// answering def by default; marks tells where a request keeps its marks.
func New[R, Q any](t testing.TB, name string, def R, marks func(*Q) Marks) *Core[R, Q] {
	return &Core[R, Q]{T: t, Default: def, Models: []string{"test-model"}, name: name, marks: marks,
		done: make(chan struct{}), release: make(chan struct{}, 64), changed: make(chan struct{})}
}

// Serve starts serving h on 127.0.0.1 until the test ends and returns the
// server's URL.
func (c *Core[R, Q]) Serve(h http.HandlerFunc) string {
	hs := httptest.NewServer(h)
	c.T.Cleanup(func() {
		close(c.done)
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}

// KeyOK says whether got, a request's key header, is prefix and the key
// the server requires, or the server requires none.
func (c *Core[R, Q]) KeyOK(got, prefix string) bool {
	return c.Key == "" || got == prefix+c.Key
}

// Enqueue adds replies, served in order, one per request answered.
func (c *Core[R, Q]) Enqueue(r ...R) {
	c.mu.Lock()
	c.queue = append(c.queue, r...)
	c.mu.Unlock()
}

// Clear drops the replies still queued.
func (c *Core[R, Q]) Clear() {
	c.mu.Lock()
	c.queue = nil
	c.mu.Unlock()
}

// Release lets one held stream go on to its next hold or its end. A
// release given before a stream reaches its hold is kept for it.
func (c *Core[R, Q]) Release() {
	select {
	case c.release <- struct{}{}:
	case <-c.done:
	}
}

// Record records q and, when it is to be answered, takes its reply in the
// same step (Route's, else the queue's first, else the default), so that a
// test that has seen the request arrive cannot race its reply with Enqueue.
func (c *Core[R, Q]) Record(q *Q, answer bool) R {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, q)
	c.signalLocked()
	if !answer {
		var none R
		return none
	}
	if c.Route != nil {
		if r, ok := c.Route(q); ok {
			return r
		}
	}
	if len(c.queue) > 0 {
		reply := c.queue[0]
		c.queue = c.queue[1:]
		return reply
	}
	return c.Default
}

// Update runs f, which changes recorded requests, under the lock that
// guards them.
func (c *Core[R, Q]) Update(f func()) {
	c.mu.Lock()
	f()
	c.signalLocked()
	c.mu.Unlock()
}

// Finish marks q's streamed answer as written whole.
func (c *Core[R, Q]) Finish(q *Q) {
	c.Update(func() { *c.marks(q).FinishedAt = time.Now() })
}

// Watch marks q cancelled when ctx, its HTTP request's, ends before the
// returned stop is called.
func (c *Core[R, Q]) Watch(ctx context.Context, q *Q) (stop func()) {
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c.Update(func() {
				m := c.marks(q)
				*m.Cancelled, *m.CancelledAt = true, time.Now()
			})
		case <-finished:
		}
	}()
	return func() { close(finished) }
}

// Requests returns copies of the requests recorded so far.
func (c *Core[R, Q]) Requests() []Q {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Q, len(c.reqs))
	for i, q := range c.reqs {
		out[i] = *q
	}
	return out
}

// Streamed are the recorded requests that asked for a streamed answer.
func (c *Core[R, Q]) Streamed() []Q {
	var out []Q
	for _, q := range c.Requests() {
		if c.marks(&q).Stream {
			out = append(out, q)
		}
	}
	return out
}

// LastStreamed is the last streamed request; the zero Q if none.
func (c *Core[R, Q]) LastStreamed() Q {
	all := c.Streamed()
	if len(all) == 0 {
		var none Q
		return none
	}
	return all[len(all)-1]
}

// WaitRequests waits until n requests have been recorded.
func (c *Core[R, Q]) WaitRequests(n int, timeout time.Duration) []Q {
	c.T.Helper()
	c.wait(timeout, fmt.Sprintf("%d requests did not arrive", n), func() bool { return len(c.reqs) >= n })
	return c.Requests()
}

// WaitCancelled waits until the client has gone away from request i
// (0-based) and returns that request.
func (c *Core[R, Q]) WaitCancelled(i int, timeout time.Duration) Q {
	c.T.Helper()
	c.wait(timeout, fmt.Sprintf("request %d was not cancelled", i), func() bool { return i < len(c.reqs) && *c.marks(c.reqs[i]).Cancelled })
	return c.Requests()[i]
}

// wait blocks until cond (called with c.mu held) holds, failing the test
// after timeout.
func (c *Core[R, Q]) wait(timeout time.Duration, failure string, cond func() bool) {
	c.T.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		ok, ch := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			c.T.Fatalf("%s: %s within %v", c.name, failure, timeout)
		}
	}
}

func (c *Core[R, Q]) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Failed answers a reply's error status: Retry-After when given, then its
// message as a plain-text body (as a proxy might send) when text, else the
// provider's error body, which body writes.
func Failed(w http.ResponseWriter, status int, retryAfter string, text bool, message string, body func()) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if !text {
		body()
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	fmt.Fprint(w, message)
}

// Chunks is n bytes of text in 1 KB chunks.
func Chunks(n int) []string {
	var out []string
	for n > 0 {
		c := min(n, 1024)
		out = append(out, strings.Repeat("x", c))
		n -= c
	}
	return out
}
