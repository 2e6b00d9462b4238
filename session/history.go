package session

import (
	"context"
	"errors"
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

// historyWriter rewrites history.md files in the background, with write
// (the store's renderer).
type historyWriter struct {
	write func(ctx context.Context, id string) error

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

// later marks a session's history.md for rewriting within HistoryDelay
// (or historyPace times the last rewrite's duration, when longer). After
// close it writes at once (nothing would later).
func (h *historyWriter) later(ctx context.Context, id string) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return h.write(ctx, id)
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
func (h *historyWriter) flushPending() error {
	h.flushing.Lock()
	defer h.flushing.Unlock()
	h.mu.Lock()
	ids := h.pending
	h.pending, h.timer = nil, nil
	h.mu.Unlock()
	start := time.Now()
	var errs []error
	for id := range ids {
		if err := h.write(context.Background(), id); err != nil && !errors.Is(err, ErrNotFound) {
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

// flush writes every pending history.md now and returns the first failure
// of a background write since the last call, if any.
func (h *historyWriter) flush() error {
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

// close writes what is pending; later changes write at once.
func (h *historyWriter) close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	return h.flush()
}

// historyLater marks a session's history.md for rewriting (see
// historyWriter.later).
func (s *SQLite) historyLater(ctx context.Context, id string) error { return s.history.later(ctx, id) }

// FlushHistory writes every pending history.md now and returns the first
// failure of a background write since the last call, if any.
func (s *SQLite) FlushHistory() error { return s.history.flush() }
