// Package testmain is what a test binary's TestMain shares: running its
// tests with more of them at once than -test.parallel's default.
package testmain

import (
	"flag"
	"strconv"
	"testing"
)

// Run runs m's tests (call it from TestMain) with up to parallel tests at
// once, unless -test.parallel is given, and returns the exit code. The
// default, GOMAXPROCS (2 in CI), suits tests that compute; tests that
// mostly wait on what they start (a daemon, an editor, a database, a
// provider's retries) leave the machine idle two at a time.
func Run(m *testing.M, parallel int) int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(parallel))
	}
	return m.Run()
}
