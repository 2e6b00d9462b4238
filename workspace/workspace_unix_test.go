//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadLimitedRefusesSpecialFiles: a FIFO (whose open would wait for a
// writer forever), a device and a folder are refused at once; a regular
// file is read up to the limit.
func TestReadLimitedRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadLimited(fifo, 100)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO hangs")
	}
	for _, p := range []string{"/dev/zero", dir} {
		if _, err := ReadLimited(p, 100); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: %v", p, err)
		}
	}
	f := filepath.Join(dir, "a.txt")
	os.WriteFile(f, []byte("0123456789"), 0o600)
	if got, err := ReadLimited(f, 4); err != nil || got != "0123" {
		t.Errorf("a regular file: %q %v", got, err)
	}
}
