//go:build !linux

package tool

import (
	"context"
	"errors"
)

// runShell: run_command runs commands on Linux only so far (their process
// group, the parent-death signal).
func runShell(ctx context.Context, sc ShellCommand) ShellResult {
	return ShellResult{Line: sc.Line, Timeout: sc.Timeout, Err: errors.New("run_command is not supported on this system yet")}
}
