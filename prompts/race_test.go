//go:build race

package prompts

// The race detector slows regexp2, the reference, down tens of times: the
// differential tests compare smaller samples under it.
func init() { raceEnabled = true }
