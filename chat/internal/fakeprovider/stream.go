package fakeprovider

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// Event is one Server-Sent Event: "event: Name" (none when Name is "", as
// OpenAI sends them), then "data: Data". Counted events are the deltas a
// reply's Pacing counts.
type Event struct {
	Name    string
	Data    []byte
	Counted bool
}

// JSON is the event name with v as its data.
func JSON(name string, v any) Event {
	b, _ := json.Marshal(v)
	return Event{Name: name, Data: b}
}

// Pacing is how a reply's counted events go out: Delay before each, a
// hold before each index in HoldAt until Release, and, when Fault, the
// fault striking before counted event FaultAfter (after the last one when
// FaultAfter is beyond them).
type Pacing struct {
	Delay      time.Duration
	HoldAt     []int
	Fault      bool
	FaultAfter int
}

// Stream is an answer being streamed.
type Stream struct {
	w       http.ResponseWriter
	r       *http.Request
	flusher http.Flusher
	split   bool
	release <-chan struct{}
	done    <-chan struct{}
}

// Stream starts a streamed answer to r: status 200 with the event-stream
// headers (and any the fake set before). When split, every event is
// written in three pieces, the last cut in the middle of its data.
func (c *Core[R, Q]) Stream(w http.ResponseWriter, r *http.Request, split bool) *Stream {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	return &Stream{w: w, r: r, flusher: flusher, split: split, release: c.release, done: c.done}
}

// Send writes and flushes e, and says whether the client is still there.
func (st *Stream) Send(e Event) bool {
	var frame []byte
	if e.Name != "" {
		frame = []byte("event: " + e.Name + "\n")
	}
	frame = append(append(append(frame, "data: "...), e.Data...), '\n', '\n')
	parts := [][]byte{frame}
	if st.split {
		cut := len(frame) - len(e.Data)/2 - 2
		parts = [][]byte{frame[:3], frame[3:cut], frame[cut:]}
	}
	for _, p := range parts {
		if _, err := st.w.Write(p); err != nil {
			return false
		}
		if st.flusher != nil {
			st.flusher.Flush()
		}
		if len(parts) > 1 {
			time.Sleep(time.Millisecond)
		}
	}
	return st.r.Context().Err() == nil
}

// Play sends events in order, pacing the counted ones as p says, and says
// whether the answer goes on: not when the client left, the server
// closed, or p's fault struck (strike is called to play it).
func (st *Stream) Play(events []Event, p Pacing, strike func()) bool {
	counted := 0
	for _, e := range events {
		if e.Counted {
			if p.Fault && counted == p.FaultAfter {
				strike()
				return false
			}
			if slices.Contains(p.HoldAt, counted) && !st.hold() {
				return false
			}
			if !Pause(st.r.Context(), p.Delay) {
				return false
			}
			counted++
		}
		if !st.Send(e) {
			return false
		}
	}
	if p.Fault {
		strike()
		return false
	}
	return true
}

// hold waits for a Release; false if the client or the server went first.
func (st *Stream) hold() bool {
	select {
	case <-st.release:
		return true
	case <-st.r.Context().Done():
	case <-st.done:
	}
	return false
}

// Reset closes the TCP connection under the answer.
func (st *Stream) Reset() {
	if hj, ok := st.w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// Stall sends nothing more and keeps the connection until the client or
// the server goes.
func (st *Stream) Stall() {
	select {
	case <-st.r.Context().Done():
	case <-st.done:
	}
}

// Pause waits d; false if ctx ended first.
func Pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}
