package session

import (
	"context"
	"fmt"
	"os"
)

// WriteLock is the data directory's write lock: the SQLite store takes it
// around every write transaction, the PostgreSQL store around changes to
// its local mirror of the session folders. SQLite's
// busy handler polls for the lock with sleeps growing to 100 ms, so under
// steady writing a process that commits and begins again keeps winning and
// another can wait past busy_timeout ("database is locked"). Here the
// process's writers queue on a channel (in order, cancellable), and one at
// a time waits on an flock of <dataDir>/ctxls.lock, which the kernel hands
// over the moment it is released.
type WriteLock struct {
	token chan struct{} // one writer of this process at a time
	file  *os.File      // nil where flock is missing
}

// OpenWriteLock opens the write lock of the data directory whose lock file
// is path (<dataDir>/ctxls.lock).
func OpenWriteLock(path string) (*WriteLock, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	return &WriteLock{token: make(chan struct{}, 1), file: f}, nil
}

// Close closes the lock file.
func (w *WriteLock) Close() error {
	if w.file == nil {
		return nil
	}
	return w.file.Close()
}

// Acquire takes the lock, or gives up when ctx is done.
func (w *WriteLock) Acquire(ctx context.Context) error {
	select {
	case w.token <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if w.file == nil || tryFlock(w.file) {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- flock(w.file, true) }()
	select {
	case err := <-done:
		if err != nil {
			<-w.token
			return fmt.Errorf("locking the data directory: %w", err)
		}
		return nil
	case <-ctx.Done():
		// The flock is still pending on this process's descriptor: keep the
		// token until it ends, so no other writer of ours takes it meanwhile.
		go func() {
			if <-done == nil {
				flock(w.file, false)
			}
			<-w.token
		}()
		return ctx.Err()
	}
}

func (w *WriteLock) Release() {
	if w.file != nil {
		flock(w.file, false)
	}
	<-w.token
}
