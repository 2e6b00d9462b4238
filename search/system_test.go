package search

import (
	"context"
	"errors"
	"testing"
	"time"

	ws "github.com/ctxls/ctxls/workspace"
)

// TestRootAtSlashSkipsSystemFolders: with a workspace folder at /, the
// walk lists / without going into /proc, /sys or /dev (every process's
// environment, devices that never end), and a Path there is refused.
func TestRootAtSlashSkipsSystemFolders(t *testing.T) {
	opts := Options{Roots: []string{"/"}}
	s, err := newScope(opts, defaultPathResults, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := newWalker(s, func(int, *entry) {})
	w.dir(0, &dirJob{abs: "/", real: "/", seg: &segment{start: "/"}})
	var seen []string
	for _, j := range w.stack {
		seen = append(seen, j.real)
		if ws.SystemPath(j.real) || j.rel == "proc" || j.rel == "sys" || j.rel == "dev" {
			t.Errorf("the walk of / goes into %s (%s)", j.rel, j.real)
		}
	}
	if len(seen) == 0 {
		t.Error("the walk of / goes nowhere")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, p := range []string{"proc", "/proc/self", "sys", "dev/shm"} {
		opts.Path = p
		if _, err := Find(ctx, opts, "*"); !errors.Is(err, errSystem) {
			t.Errorf("find in %s: %v", p, err)
		}
	}
}
