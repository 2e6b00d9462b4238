//go:build race

package buffer

// raceOn reports a -race build, where copying multi-megabyte texts is slow:
// tests that do it at every step take fewer steps.
const raceOn = true
