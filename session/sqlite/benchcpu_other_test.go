//go:build !unix

package session

import "testing"

// reportCPU reports nothing where getrusage is missing.
func reportCPU(*testing.B) {}
