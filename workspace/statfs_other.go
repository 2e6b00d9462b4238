//go:build !linux

package workspace

import "os"

// onSystemFS cannot be told here beyond the path (SystemPath).
func onSystemFS(*os.File) bool { return false }
