//go:build !unix

package sqlite

import "testing"

// reportCPU reports nothing where getrusage is missing.
func reportCPU(*testing.B) {}
