package workspace

import (
	"errors"
	"strings"
)

// systemDirs are where the kernel shows itself as files: /proc (every
// process's environment and memory, the daemon's API key in
// /proc/self/environ), /sys and /dev. They are not the user's files, so
// nothing under them is read or searched, whatever the workspace folders
// (a folder at / holds them).
var systemDirs = []string{"/proc", "/sys", "/dev"}

// ErrSystemFile is returned for a path under /proc, /sys or /dev, or on
// such a file system wherever it is mounted.
var ErrSystemFile = errors.New("a system file (/proc, /sys, /dev), never read")

// SystemPath reports whether an absolute, clean path is under /proc, /sys
// or /dev (or is one of them). It looks at the path as given: give it the
// path with its links resolved too.
func SystemPath(path string) bool {
	for _, d := range systemDirs {
		if strings.HasPrefix(path, d) && (len(path) == len(d) || path[len(d)] == '/') {
			return true
		}
	}
	return false
}
