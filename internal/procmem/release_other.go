//go:build !linux

package procmem

// ReleaseImage does nothing on this system.
func ReleaseImage() (int, error) { return 0, nil }
