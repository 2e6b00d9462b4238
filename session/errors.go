package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	// also registers the "sqlite" driver
)

var (
	// ErrNotFound: an unknown session, message or file.
	ErrNotFound = errors.New("not found")
	// ErrInvalid: an argument that breaks a rule; the message says which.
	ErrInvalid = errors.New("invalid argument")
	// ErrTooLarge: a file over MaxFileSize.
	ErrTooLarge = errors.New("too large")
	// ErrPermission: the store refused a change only a session's owner may
	// make (sharing or deleting another's session in PostgreSQL).
	ErrPermission = errors.New("permission denied")
)

// MaxFileSize is the largest file a session accepts: 25 MiB, 26,214,400 bytes.
const MaxFileSize = 25 << 20

func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func NotFound(id string) error {
	return fmt.Errorf("session %q: %w", Truncate(id, 80), ErrNotFound)
}

func Invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// WriteFileAtomic writes data to path through a temporary file and rename.
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicMode(path, data, 0)
}

// WriteFileAtomicFrom is WriteFileAtomic with the content written by src.
func WriteFileAtomicFrom(path string, src io.WriterTo) error {
	return writeAtomic(path, src, 0)
}

// WriteFileAtomicMode is WriteFileAtomic giving the file mode (0: the
// temporary file's, 0600).
func WriteFileAtomicMode(path string, data []byte, mode os.FileMode) error {
	return writeAtomic(path, bytes.NewReader(data), mode)
}

// writeAtomic writes what src writes to path through a temporary file in
// its folder and a rename, with mode (0: the temporary file's, 0600).
func writeAtomic(path string, src io.WriterTo, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = src.WriteTo(tmp)
	if err == nil && mode != 0 {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// Within reports whether path is dir or inside it (lexically: resolve
// symbolic links first where they matter).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// HasControl reports whether s holds a control character: C0 (a line
// break, ESC, NUL, …), DEL or C1 (U+0080 to U+009F; NEL and CSI among
// them). No name the stores keep (a title, a model, a tool, a workspace
// folder, an output file) needs one, and one printed to a terminal or
// made a file name can forge lines or drive the terminal. workspace's
// path checks use it too, so both refuse the same characters.
func HasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f })
}
