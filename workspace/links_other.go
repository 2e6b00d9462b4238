//go:build !unix

package workspace

// HardLinks cannot be told here: every file counts as having one name.
func HardLinks(string) uint64 { return 1 }
