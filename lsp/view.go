package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// defaultViewIdle is how long the editor's view must stay unchanged before
// it is captured as the current session's applet set (viewIdleMs).
const defaultViewIdle = 2 * time.Second

// maxViewIdleMs is the largest viewIdleMs accepted: an hour.
const maxViewIdleMs = 3_600_000

// viewState holds the editor's last view until it has been idle for long
// enough, and the timer that captures it then.
//
// Ownership: the read loop arms the timer (didChangeView, in wire order);
// the timer's own goroutine (time.AfterFunc) runs the capture, which writes
// to the store and notifies, so the read loop never waits on the store;
// Run and shutdown stop it. mu guards every field, and is never held across
// the store write.
type viewState struct {
	mu      sync.Mutex
	idle    time.Duration // 0 means defaultViewIdle
	timer   *time.Timer   // the capture of the latest view; nil before the first
	gen     uint64        // counts views; a timer of an older view does nothing
	pending *viewCapture  // what the latest view captures; nil once taken
	stopped bool          // shut down: nothing is armed or captured any more
	running sync.WaitGroup
}

// viewCapture is one view change waiting for the editor to go idle.
type viewCapture struct {
	ctx       context.Context // the connection's
	sessionID string          // current when the view changed; "" when none was
	items     []string        // the applet set, when the view counts
	skip      string          // why the view does not count
}

// didChangeView handles ctxls/didChangeView and its older name
// textDocument/didFocus: it records the active file and arms the idle
// capture of the view.
func (s *Server) didChangeView(ctx context.Context, raw json.RawMessage) error {
	var p api.DidChangeViewParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	u := p.TextDocument.URI
	if u == "" {
		return errors.New("textDocument.uri is required")
	}
	path, isFile := uriPath(u)
	if err := s.docs.Focus(u, path); err != nil {
		return err
	}
	svc, err := s.service()
	if err != nil {
		return err
	}
	roots, current := svc.Roots(), svc.Current()
	// A view that does not count still replaces the pending one: the view
	// before it is no longer the one the editor rests on.
	c := &viewCapture{ctx: ctx, sessionID: current}
	switch {
	case !isFile:
		c.skip = "not a file:// document"
	case !insideAny(path, roots):
		c.skip = "outside the workspace folders"
	default:
		c.items = appletItems(path, p.Selection, p.VisibleRange)
	}
	s.view.arm(s, c)
	return nil
}

// appletItems is the applet set for a view: ["editor", "file=<path>",
// "line=<n>"] plus "selection=<a>-<b>" when the selection spans lines
// (1-based lines; a selection ending at the start of a line ends on the
// line before). Without a selection the line is the first visible one;
// without either there is no line.
func appletItems(path string, sel, visible *api.Range) []string {
	items := []string{"editor", "file=" + path}
	switch {
	case sel != nil:
		start, end := sel.Start, sel.End
		if end.Line < start.Line || end.Line == start.Line && end.Character < start.Character {
			start, end = end, start
		}
		last := end.Line
		if end.Line > start.Line && end.Character == 0 {
			last--
		}
		items = append(items, fmt.Sprintf("line=%d", uint64(start.Line)+1))
		if last > start.Line {
			items = append(items, fmt.Sprintf("selection=%d-%d", uint64(start.Line)+1, uint64(last)+1))
		}
	case visible != nil:
		items = append(items, fmt.Sprintf("line=%d", uint64(min(visible.Start.Line, visible.End.Line))+1))
	}
	return items
}

// insideAny reports whether path is one of roots or inside one.
func insideAny(path string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return service.Within(path, r) })
}

// arm makes c the pending view and (re)starts the idle timer. Called on the
// read loop.
func (v *viewState) arm(s *Server, c *viewCapture) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped {
		return
	}
	v.gen++
	gen := v.gen
	v.pending = c
	if v.timer != nil {
		v.timer.Stop()
	}
	idle := v.idle
	if idle <= 0 {
		idle = defaultViewIdle
	}
	v.timer = time.AfterFunc(idle, func() { s.captureView(gen) })
}

// setIdle changes viewIdleMs; it applies from the next view change.
func (v *viewState) setIdle(d time.Duration) {
	v.mu.Lock()
	v.idle = d
	v.mu.Unlock()
}

// stop cancels the pending capture and waits for one that is running, so
// nothing writes to the store after it returns.
func (v *viewState) stop() {
	v.mu.Lock()
	v.stopped = true
	v.pending = nil
	if v.timer != nil {
		v.timer.Stop()
	}
	v.mu.Unlock()
	v.running.Wait()
}

// captureView runs on the timer's goroutine when the view of generation gen
// has been idle for viewIdleMs.
func (s *Server) captureView(gen uint64) {
	v := &s.view
	v.mu.Lock()
	if v.stopped || gen != v.gen || v.pending == nil {
		v.mu.Unlock()
		return
	}
	c := v.pending
	v.pending = nil
	v.running.Add(1)
	v.mu.Unlock()
	defer v.running.Done()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("view capture panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	s.writeApplet(c)
}

// writeApplet stores a captured view as the applet set of the session that
// was current when the view changed, if it still is (eventual consistency:
// a view is never written to a session the user switched to after it), and
// sends ctxls/contextChanged when the set changed.
func (s *Server) writeApplet(c *viewCapture) {
	skip := c.skip
	svc, err := s.service()
	if skip == "" && err != nil {
		skip = "no store"
	}
	if skip == "" {
		skip = svc.CaptureView(c.ctx, c.sessionID, c.items)
	}
	if skip != "" {
		s.log.Debug("view capture skipped", "reason", skip, "session", c.sessionID)
		return
	}
	s.log.Debug("view captured", "session", c.sessionID, "applet", strings.Join(c.items, " "))
}

// parseViewIdle reads viewIdleMs (initializationOptions or settings): a
// whole number of milliseconds from 1 to an hour. Absent or null gives 0
// (unchanged).
func parseViewIdle(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var ms int64
	if err := json.Unmarshal(raw, &ms); err != nil || ms < 1 || ms > maxViewIdleMs {
		return 0, fmt.Errorf("viewIdleMs must be a whole number of milliseconds from 1 to %d, got %s", maxViewIdleMs, truncate(string(raw), 40))
	}
	return time.Duration(ms) * time.Millisecond, nil
}
