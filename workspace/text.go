package workspace

import (
	"fmt"
	"os"
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

// BinaryNote is what the model is shown of a file whose text is Binary
// instead of its bytes: "<name>: binary file, N bytes (it holds NUL
// bytes); not shown", N the file's size on disk when the text was read
// from path there (a sparse file's, holes included; "" or an editor's
// text: the text's length). "" when text is no such file. read_file and a
// turn's relevant files both say it, so the model reads one sentence.
func BinaryNote(name, path, text string) string {
	if !Binary(text) {
		return ""
	}
	size := int64(len(text))
	if path != "" {
		if fi, err := os.Stat(path); err == nil {
			size = fi.Size()
		}
	}
	return fmt.Sprintf("%s: binary file, %d bytes (it holds NUL bytes); not shown", name, size)
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
