package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDepsLinksWhatCtxlsLinks: the minimal server built with -tags deps
// links every package outside the standard library that ctxls links, so
// the start-up floor bench/run measures with it is the libraries' whole
// cost (a library added to ctxls and not to deps.go fails here).
func TestDepsLinksWhatCtxlsLinks(t *testing.T) {
	list := func(args ...string) map[string]bool {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", args, err, out)
		}
		set := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			if !strings.HasPrefix(p, "github.com/ctxls/ctxls") {
				set[p] = true
			}
		}
		return set
	}
	ctxls := list("../../cmd/ctxls")
	deps := list("-tags", "deps", ".")
	if len(ctxls) < 10 {
		t.Fatalf("ctxls links only %d packages outside the standard library and itself: %v", len(ctxls), ctxls)
	}
	for p := range ctxls {
		if !deps[p] {
			t.Errorf("ctxls links %s and bench/minimal -tags deps does not: add it (or what imports it) to deps.go", p)
		}
	}
	plain := list(".")
	if len(plain) != 0 {
		t.Errorf("bench/minimal without the tag links %v: it is the standard library's floor", plain)
	}
}
