package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// OutputSubdirs are the session subfolders the model writes into, the
// default first: results/ (final outputs), scripts/ (programs it writes),
// data/ (intermediate data, the only folder the storage clean-up removes
// from). sources/ holds the user's files and is never written by the model.
var OutputSubdirs = []string{"results", "scripts", "data"}

// Limits on a path the model writes (WriteOutput).
const (
	maxOutputPath  = 1024 // bytes, the whole path
	maxOutputDepth = 8    // folders below the subfolder
)

// Written describes a file WriteOutput wrote.
type Written struct {
	Subdir   string // results, scripts or data
	Name     string // the path below Subdir, "/"-separated: "q1.csv", "charts/q1.png"
	Size     int64
	Replaced bool // a file of that name existed and was replaced
}

// ParseOutputPath checks a path the model asks to write and splits it into
// its subfolder and the name below it. It accepts results/NAME, scripts/NAME
// and data/NAME, with folders below those, and a bare NAME, which goes to
// results/. It refuses sources/, anything outside the three folders, "..",
// ".", empty parts, absolute paths, backslashes, NUL and other control
// characters, and any part that starts with a dot.
func ParseOutputPath(p string) (subdir, name string, err error) {
	switch {
	case p == "":
		return "", "", invalid("path is required")
	case len(p) > maxOutputPath:
		return "", "", invalid("path is %d bytes long; the limit is %d", len(p), maxOutputPath)
	case strings.ContainsRune(p, 0):
		return "", "", invalid("path %q contains a NUL character", truncate(p, 80))
	case hasControl(p):
		return "", "", invalid("path %q contains a control character", truncate(p, 80))
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return "", "", invalid("path %q is absolute; give results/NAME, scripts/NAME or data/NAME inside the session folder", truncate(p, 80))
	case strings.Contains(p, `\`):
		return "", "", invalid("path %q contains \"\\\"; separate folders with \"/\"", truncate(p, 80))
	}
	parts := strings.Split(p, "/")
	for _, part := range parts {
		switch {
		case part == "":
			return "", "", invalid("path %q has an empty part (a leading, trailing or doubled \"/\")", truncate(p, 80))
		case part == "." || part == "..":
			return "", "", invalid("path %q must not contain %q", truncate(p, 80), part)
		case strings.HasPrefix(part, "."):
			return "", "", invalid("path %q: %q starts with a dot; hidden files are not written", truncate(p, 80), truncate(part, 80))
		case len(part) > 255:
			return "", "", invalid("path %q: a part is %d bytes long; the limit is 255", truncate(p, 80), len(part))
		}
	}
	if len(parts) == 1 {
		return OutputSubdirs[0], parts[0], nil
	}
	switch {
	case parts[0] == "sources":
		return "", "", invalid("%q is in sources/, which holds the user's files and is read-only; write to results/, scripts/ or data/", truncate(p, 80))
	case !slices.Contains(OutputSubdirs, parts[0]):
		return "", "", invalid("path %q must start with results/, scripts/ or data/ (or be a bare name, which goes to results/)", truncate(p, 80))
	case len(parts)-2 > maxOutputDepth:
		return "", "", invalid("path %q is %d folders deep below %s/; the limit is %d", truncate(p, 80), len(parts)-2, parts[0], maxOutputDepth)
	}
	return parts[0], strings.Join(parts[1:], "/"), nil
}

// WriteOutput writes content into the session's results/, scripts/ or
// data/ at path (see ParseOutputPath), making the folders below as needed.
// An existing file is replaced (a symbolic link there is replaced as a
// link, never written through); a folder, or a symbolic link or anything
// but a real folder on the way, is refused. Over MaxFileSize it fails with
// ErrTooLarge. The content is staged in the data directory's tmp/ and moved
// into place inside the write lock (see inFolder): a reader sees the whole
// old file or the whole new one, and a rename cannot move the folder
// meanwhile.
func (s *SQLite) WriteOutput(ctx context.Context, sessionID, path string, content []byte) (*Written, error) {
	sub, name, err := ParseOutputPath(path)
	if err != nil {
		return nil, err
	}
	if n := int64(len(content)); n > MaxFileSize {
		return nil, fmt.Errorf("%w: %s/%s would be %s; the limit is %s", ErrTooLarge, sub, name, Bytes(n), sizeLimit())
	}
	if _, err := s.folderOf(ctx, sessionID); err != nil {
		return nil, err // fail before writing
	}
	tmp, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), ".output-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name()) // once moved, a no-op
	_, err = tmp.Write(content)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	w := &Written{Subdir: sub, Name: name, Size: int64(len(content))}
	err = s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		target, replaced, err := outputTarget(folder, sub, name, true)
		if err != nil {
			return err
		}
		w.Replaced = replaced
		if err := os.Rename(tmp.Name(), target); err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// OutputTarget checks path as WriteOutput does, makes the folders below
// results/, scripts/ or data/ as needed, and returns the absolute path the
// file goes to, for a writer other than the store (an ACP client's
// fs/write_text_file, so the editor sees the write). The caller writes.
func (s *SQLite) OutputTarget(ctx context.Context, sessionID, path string, size int64) (string, *Written, error) {
	sub, name, err := ParseOutputPath(path)
	if err != nil {
		return "", nil, err
	}
	if size > MaxFileSize {
		return "", nil, fmt.Errorf("%w: %s/%s would be %s; the limit is %s", ErrTooLarge, sub, name, Bytes(size), sizeLimit())
	}
	w := &Written{Subdir: sub, Name: name, Size: size}
	var target string
	err = s.inFolder(ctx, sessionID, func(tx *sql.Tx, folder string) error {
		var err error
		target, w.Replaced, err = outputTarget(folder, sub, name, false)
		if err != nil {
			return err
		}
		return s.touch(ctx, tx, sessionID)
	})
	if err != nil {
		return "", nil, err
	}
	return target, w, nil
}

// outputTarget makes the folders for sub/name in a session folder and
// returns the file's path and whether a file is there already. A symbolic
// link or a file on the way, or a folder at the target, is refused; so is
// a symbolic link at the target, unless the caller replaces it (a rename)
// rather than writing through it.
func outputTarget(folder, sub, name string, replaceLinks bool) (string, bool, error) {
	dir, err := subdirIn(folder, sub, true)
	if err != nil {
		return "", false, err
	}
	parts := strings.Split(name, "/")
	for _, p := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(dir, 0o700); err != nil {
				return "", false, err
			}
		case err != nil:
			return "", false, err
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", false, invalid("%s/%s: %q is a symbolic link; refusing to write through it", sub, name, p)
		case !fi.IsDir():
			return "", false, invalid("%s/%s: %q is a file, not a folder", sub, name, p)
		}
	}
	target := filepath.Join(dir, parts[len(parts)-1])
	fi, err := os.Lstat(target)
	switch {
	case err == nil && fi.IsDir():
		return "", false, invalid("%s/%s is a folder", sub, name)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0 && !replaceLinks:
		return "", false, invalid("%s/%s is a symbolic link; refusing to write through it", sub, name)
	case err == nil:
		return target, true, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, err
	}
	return target, false, nil
}

// Bytes writes a byte count exactly, with thousands separators:
// "27,000,000 bytes".
func Bytes(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if n == 1 {
		return b.String() + " byte"
	}
	return b.String() + " bytes"
}

// sizeLimit states MaxFileSize: "26,214,400 bytes (25 MiB)".
func sizeLimit() string { return fmt.Sprintf("%s (%d MiB)", Bytes(MaxFileSize), MaxFileSize>>20) }

// OutputWritten has nothing to do: the file at OutputTarget's path is the
// stored file.
func (s *SQLite) OutputWritten(context.Context, string, string, []byte) error { return nil }
