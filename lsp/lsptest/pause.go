package lsptest

import "sync"

// pauseGate holds the fake editor's read loop while it is closed.
type pauseGate struct {
	mu sync.Mutex
	ch chan struct{} // nil when open; closed to reopen
}

func (g *pauseGate) wait() {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// PauseReading makes the fake editor stop reading the server's output, as
// a hung editor would, until resume is called: the server's writes then
// block once the pipe is full. A frame being read when it is called is
// still read. Requests must then be sent from another goroutine, since the
// server may stop reading too.
func (e *Editor) PauseReading() (resume func()) {
	ch := make(chan struct{})
	e.pause.mu.Lock()
	e.pause.ch = ch
	e.pause.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.pause.mu.Lock()
			e.pause.ch = nil
			e.pause.mu.Unlock()
			close(ch)
		})
	}
}
