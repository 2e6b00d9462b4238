//go:build unix

package chat

import (
	"os"
	"syscall"
)

// hardLinks is the link count of a regular file, 1 when it cannot be told.
func hardLinks(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
