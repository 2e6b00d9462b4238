package session

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// HistoryDelay is how long after a message change its session's history.md
// is rewritten. Changes within it are written once: a streaming answer
// checkpointed every 500 ms, or a user message followed by the answer's
// placeholder, cost one rendering, and none of it sits on a turn's way to
// its first token. history.md is derived from the database, which stays the
// source of truth; a daemon killed within HistoryDelay of a change leaves
// the file one change behind until the session's next change.
const HistoryDelay = 100 * time.Millisecond

// historyPace spaces background rewrites by this many times the last
// one's duration when that is longer than HistoryDelay. A rewrite renders
// the whole session inside a write transaction, so on a long session
// changed without pause (thousands of messages appended in a row) rewrites
// back to back would take all of the store's time and hold every write up;
// paced, they take about a fifth of it.
const historyPace = 4

// HistoryWriter rewrites history.md files in the background, with write
// (the store's renderer).
type HistoryWriter struct {
	Write func(ctx context.Context, id string) error

	// cache is the Markdown of long sessions' settled messages, for the
	// store's renderer.
	Cache HistoryCache

	// flushing is held while pending sessions are written, so Flush waits
	// for a background write under way.
	flushing sync.Mutex

	// mu guards pending, timer, closed, lastErr and cost.
	mu      sync.Mutex
	pending map[string]bool
	timer   *time.Timer
	closed  bool
	lastErr error
	cost    time.Duration // how long the last rewrite of pending sessions took
}

// Later marks a session's history.md for rewriting within HistoryDelay
// (or historyPace times the last rewrite's duration, when longer). After
// Close it writes at once (nothing would later).
func (h *HistoryWriter) Later(ctx context.Context, id string) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return h.Write(ctx, id)
	}
	if h.pending == nil {
		h.pending = map[string]bool{}
	}
	h.pending[id] = true
	if h.timer == nil {
		h.timer = time.AfterFunc(max(HistoryDelay, historyPace*h.cost), func() { h.flushPending() })
	}
	h.mu.Unlock()
	return nil
}

// flushPending writes every pending history.md. A session deleted in the
// meantime is skipped; other failures are kept for FlushHistory to report.
func (h *HistoryWriter) flushPending() error {
	h.flushing.Lock()
	defer h.flushing.Unlock()
	h.mu.Lock()
	ids := h.pending
	h.pending, h.timer = nil, nil
	h.mu.Unlock()
	start := time.Now()
	var errs []error
	for id := range ids {
		if err := h.Write(context.Background(), id); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	h.mu.Lock()
	h.cost = time.Since(start)
	if err != nil {
		h.lastErr = err
	}
	h.mu.Unlock()
	return err
}

// Flush writes every pending history.md now and returns the first failure
// of a background write since the last call, if any.
func (h *HistoryWriter) Flush() error {
	h.mu.Lock()
	if h.timer != nil {
		h.timer.Stop()
	}
	h.mu.Unlock()
	err := h.flushPending()
	h.mu.Lock()
	if err == nil {
		err = h.lastErr
	}
	h.lastErr = nil
	h.mu.Unlock()
	return err
}

// Close writes what is pending; later changes write at once.
func (h *HistoryWriter) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	return h.Flush()
}

const (
	// historyCacheMin is the fewest settled messages worth keeping: a
	// shorter session renders whole in well under a millisecond. (It was
	// 200: a 100-message session then read and rendered every message at
	// each rewrite, half the daemon's history.md CPU on the first-delta
	// benchmark's 100-message sessions.)
	historyCacheMin = 20
	// historyCacheBytes bounds the Markdown kept for all sessions; the
	// least recently written go first.
	historyCacheBytes = 8 << 20
	// historyCacheIdle is how long an entry is kept without a rewrite.
	historyCacheIdle = 2 * time.Minute
)

// HistoryCache keeps, for the long sessions whose history.md was written
// lately, the Markdown of their settled messages, so that a rewrite reads
// and renders only the messages after them: a change to a session of
// 10,000 messages costs what one to a session of 100 does (issue 14).
// A message is settled once it no longer streams; a summary is placed
// among the messages it covers, so one stored after the settled messages
// but covering some of them has them all rendered again. (An answer
// saved after another daemon marked it interrupted, with the first one
// frozen for minutes, shows its earlier text until this daemon renders the
// session whole again: after a restart or the entry's eviction.)
type HistoryCache struct {
	mu      sync.Mutex
	entries map[string]*historyEntry
	bytes   int // held by the entries' bodies
}

type historyEntry struct {
	through int64  // the highest id among the messages rendered in body
	count   int    // how many messages body renders
	body    []byte // their Markdown, in conversation order; only ever appended to
	used    time.Time
}

// History is a rendered history.md in three parts: the head, the settled
// messages' Markdown (the cache's own bytes, shared and never changed) and
// the messages after them. A rewrite writes the parts as they are, so a
// session of 10,000 messages costs no copy of its Markdown.
type History struct {
	head, settled, rest []byte
}

// WriteTo writes the whole file to w.
func (h History) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, p := range [][]byte{h.head, h.settled, h.rest} {
		k, err := w.Write(p)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// String is the whole file.
func (h History) String() string {
	return string(h.head) + string(h.settled) + string(h.rest)
}

// Render returns session ss's history.md: the head from ss and sets, then
// its messages, read through after (the session's messages with ids above
// the one given, oldest first) from where the kept Markdown stops.
func (c *HistoryCache) Render(ss *Session, sets Context, after func(id int64) ([]Message, error)) (History, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var (
		through int64
		count   int
		body    []byte
	)
	if e := c.entries[ss.ID]; e != nil {
		through, count, body = e.through, e.count, e.body
	}
	// Read from the last message kept, to see that it is still there: a
	// Rewind elsewhere may have removed it (ids are never reused).
	tail, err := after(max(through-1, 0))
	if err != nil {
		return History{}, err
	}
	if through > 0 {
		if len(tail) > 0 && tail[0].ID == through {
			tail = tail[1:]
		} else {
			through = -1 // gone: render it all again, below
		}
	}
	if through < 0 || through > 0 && slices.ContainsFunc(tail, func(m Message) bool { return m.IsSummary() && m.SummaryOf.Last <= through }) {
		through, count, body = 0, 0, nil
		if tail, err = after(0); err != nil {
			return History{}, err
		}
	}
	// Settled: the messages before the first one still streaming, less any
	// that a later summary goes in between.
	k := slices.IndexFunc(tail, func(m Message) bool { return m.Status == StatusStreaming })
	if k < 0 {
		k = len(tail)
	}
	for k > 0 && slices.ContainsFunc(tail[k:], func(m Message) bool { return m.IsSummary() && m.SummaryOf.Last < tail[k-1].ID }) {
		k--
	}
	if k > 0 {
		// Appended after the kept bytes: a History returned earlier holds
		// body[:its length], which this never writes (append writes only
		// past len, in spare capacity or a new array).
		var more strings.Builder
		markdownMessages(&more, InConversationOrder(tail[:k]))
		body = append(body, more.String()...)
		through, count = tail[k-1].ID, count+k
	}
	var head, rest strings.Builder
	markdownHead(&head, ss, sets)
	markdownMessages(&rest, InConversationOrder(tail[k:]))
	c.keep(ss.ID, &historyEntry{through: through, count: count, body: body, used: time.Now()})
	return History{head: []byte(head.String()), settled: body, rest: []byte(rest.String())}, nil
}

// Kept is how many messages of session id the cache keeps rendered (0
// for none).
func (c *HistoryCache) Kept(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[id]; e != nil {
		return e.count
	}
	return 0
}

// keep stores e for id when it is worth keeping, and drops entries idle
// for historyCacheIdle and then the oldest while over historyCacheBytes.
func (c *HistoryCache) keep(id string, e *historyEntry) {
	if old := c.entries[id]; old != nil {
		c.bytes -= len(old.body)
		delete(c.entries, id)
	}
	if e.count >= historyCacheMin && len(e.body) <= historyCacheBytes {
		if c.entries == nil {
			c.entries = map[string]*historyEntry{}
		}
		c.entries[id] = e
		c.bytes += len(e.body)
	}
	for id, old := range c.entries {
		if time.Since(old.used) > historyCacheIdle {
			c.bytes -= len(old.body)
			delete(c.entries, id)
		}
	}
	for c.bytes > historyCacheBytes {
		oldest := ""
		for id, old := range c.entries {
			if oldest == "" || old.used.Before(c.entries[oldest].used) {
				oldest = id
			}
		}
		c.bytes -= len(c.entries[oldest].body)
		delete(c.entries, oldest)
	}
}

// Forget drops a session's entry (the session is deleted).
func (c *HistoryCache) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[id]; old != nil {
		c.bytes -= len(old.body)
		delete(c.entries, id)
	}
}
