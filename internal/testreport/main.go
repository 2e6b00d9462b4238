// Command testreport reads `go test -json` on its input and writes what
// plain `go test` would (each package's ok or FAIL line, the output of the
// tests that failed) followed by where the time went: the slowest packages
// and tests. .ci/run pipes the README's test command through it, so each
// change sees which tests grew.
//
// It exits 0 whatever the tests did: the caller takes go test's status.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// event is one line of test2json (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// timing is a package's or a test's time.
type timing struct {
	name    string
	elapsed float64
}

func main() {
	report(os.Stdin, os.Stdout, 5, 10)
}

// report copies in's events to out as plain go test would, then the
// slowest packages and top-level tests.
func report(in io.Reader, out io.Writer, packages, tests int) {
	type key struct{ pkg, test string }
	held := map[key][]string{} // a running test's output, shown if it fails
	var pkgs, tops []timing
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, sc.Text()) // not an event: build errors, vet
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output) // a package that does not compile
		case "output":
			held[k] = append(held[k], e.Output)
		case "pass", "skip":
			delete(held, k)
			if e.Test == "" {
				pkgs = append(pkgs, timing{short(e.Package), e.Elapsed})
				fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			} else if !strings.Contains(e.Test, "/") && e.Action == "pass" {
				tops = append(tops, timing{short(e.Package) + " " + e.Test, e.Elapsed})
			}
		case "fail":
			// A failed test's output; a failed package's own (a panic, a
			// TestMain's complaint), less its last line, written below.
			for _, line := range held[k] {
				if e.Test != "" || !strings.HasPrefix(line, "FAIL\t"+e.Package) {
					fmt.Fprint(out, line)
				}
			}
			delete(held, k)
			if e.Test == "" {
				pkgs = append(pkgs, timing{short(e.Package), e.Elapsed})
				fmt.Fprintf(out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			} else if !strings.Contains(e.Test, "/") {
				tops = append(tops, timing{short(e.Package) + " " + e.Test, e.Elapsed})
			}
		}
	}
	slowest := func(title string, ts []timing, n int) {
		slices.SortFunc(ts, func(a, b timing) int {
			switch {
			case a.elapsed > b.elapsed:
				return -1
			case a.elapsed < b.elapsed:
				return 1
			}
			return strings.Compare(a.name, b.name)
		})
		fmt.Fprintf(out, "== %s\n", title)
		for _, t := range ts[:min(n, len(ts))] {
			fmt.Fprintf(out, "%8.1f s  %s\n", t.elapsed, t.name)
		}
	}
	slowest("slowest packages", pkgs, packages)
	slowest("slowest tests (a parallel test's time includes its wait for a turn to run)", tops, tests)
}

// short is a package path without the module's.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/ctxls/ctxls/")
}
