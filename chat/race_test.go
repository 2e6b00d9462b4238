//go:build race

package chat

// The race detector slows a turn streaming megabytes down several times.
func init() { raceEnabled = true }
