//go:build !unix

package postgres

import "testing"

// reportCPU reports nothing where getrusage is missing.
func reportCPU(*testing.B) {}
