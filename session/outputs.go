package session

import (
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
	MaxOutputDepth = 8    // folders below the subfolder
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
		return "", "", Invalidf("path is required")
	case len(p) > maxOutputPath:
		return "", "", Invalidf("path is %d bytes long; the limit is %d", len(p), maxOutputPath)
	case strings.ContainsRune(p, 0):
		return "", "", Invalidf("path %q contains a NUL character", Truncate(p, 80))
	case HasControl(p):
		return "", "", Invalidf("path %q contains a control character", Truncate(p, 80))
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return "", "", Invalidf("path %q is absolute; give results/NAME, scripts/NAME or data/NAME inside the session folder", Truncate(p, 80))
	case strings.Contains(p, `\`):
		return "", "", Invalidf("path %q contains \"\\\"; separate folders with \"/\"", Truncate(p, 80))
	}
	parts := strings.Split(p, "/")
	for _, part := range parts {
		switch {
		case part == "":
			return "", "", Invalidf("path %q has an empty part (a leading, trailing or doubled \"/\")", Truncate(p, 80))
		case part == "." || part == "..":
			return "", "", Invalidf("path %q must not contain %q", Truncate(p, 80), part)
		case strings.HasPrefix(part, "."):
			return "", "", Invalidf("path %q: %q starts with a dot; hidden files are not written", Truncate(p, 80), Truncate(part, 80))
		case len(part) > 255:
			return "", "", Invalidf("path %q: a part is %d bytes long; the limit is 255", Truncate(p, 80), len(part))
		}
	}
	if len(parts) == 1 {
		return OutputSubdirs[0], parts[0], nil
	}
	switch {
	case parts[0] == "sources":
		return "", "", Invalidf("%q is in sources/, which holds the user's files and is read-only; write to results/, scripts/ or data/", Truncate(p, 80))
	case !slices.Contains(OutputSubdirs, parts[0]):
		return "", "", Invalidf("path %q must start with results/, scripts/ or data/ (or be a bare name, which goes to results/)", Truncate(p, 80))
	case len(parts)-2 > MaxOutputDepth:
		return "", "", Invalidf("path %q is %d folders deep below %s/; the limit is %d", Truncate(p, 80), len(parts)-2, parts[0], MaxOutputDepth)
	}
	return parts[0], strings.Join(parts[1:], "/"), nil
}

// OutputTarget makes the folders for sub/name in a session folder and
// returns the file's path and whether a file is there already. A symbolic
// link or a file on the way, or a folder at the target, is refused; so is
// a symbolic link at the target, unless the caller replaces it (a rename)
// rather than writing through it.
func OutputTarget(folder, sub, name string, replaceLinks bool) (string, bool, error) {
	dir, err := SubdirIn(folder, sub, true)
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
			return "", false, Invalidf("%s/%s: %q is a symbolic link; refusing to write through it", sub, name, p)
		case !fi.IsDir():
			return "", false, Invalidf("%s/%s: %q is a file, not a folder", sub, name, p)
		}
	}
	target := filepath.Join(dir, parts[len(parts)-1])
	fi, err := os.Lstat(target)
	switch {
	case err == nil && fi.IsDir():
		return "", false, Invalidf("%s/%s is a folder", sub, name)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0 && !replaceLinks:
		return "", false, Invalidf("%s/%s is a symbolic link; refusing to write through it", sub, name)
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

// SizeLimit states MaxFileSize: "26,214,400 bytes (25 MiB)".
func SizeLimit() string { return fmt.Sprintf("%s (%d MiB)", Bytes(MaxFileSize), MaxFileSize>>20) }
