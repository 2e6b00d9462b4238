//go:build unix

package workspace

import (
	"os"
	"syscall"
)

// HardLinks is the link count of a regular file, 1 when it cannot be told.
func HardLinks(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
