package workspace

import (
	"fmt"
	"strings"

	"github.com/ctxls/ctxls/session"
)

// Binary reports whether text is not text to show the model: it holds a
// NUL byte. git calls a file binary by a NUL in its first 8 KiB; the
// caller gives only what it would show (read_file its first 256 KiB), and
// a NUL anywhere there is binary data or a sparse file's hole, which reads
// as NULs: 256 KiB of them are no use to anyone.
func Binary(text string) bool {
	return strings.IndexByte(text, 0) >= 0
}

// CheckPath refuses a path the model gave that holds a control character
// (session.HasControl: C0, DEL or C1; in a path one can forge lines of a
// tool's output or drive the user's terminal); the error shows it escaped.
func CheckPath(p string) error {
	if strings.ContainsRune(p, 0) { // as the session's stores say it
		return fmt.Errorf("path %q contains a NUL character", p)
	}
	if session.HasControl(p) {
		return fmt.Errorf("path %q contains a control character; no file is named so here", p)
	}
	return nil
}
