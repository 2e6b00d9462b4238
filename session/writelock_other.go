//go:build !unix

package session

import "os"

// openLockFile returns no file where flock is missing: writers of several
// processes then queue in SQLite's busy handler only.
func openLockFile(string) (*os.File, error) { return nil, nil }

func flock(*os.File, bool) error { return nil }

func tryFlock(*os.File) bool { return true }

// processAlive cannot tell here: only heartbeats decide.
func processAlive(int) bool { return true }
