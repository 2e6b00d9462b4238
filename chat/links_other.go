//go:build !unix

package chat

// hardLinks cannot be told here: every file counts as having one name.
func hardLinks(string) uint64 { return 1 }
