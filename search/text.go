package search

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxls/ctxls/internal/human"
)

var (
	errTooLarge   = errors.New("file too large")
	errNotRegular = errors.New("not a regular file")
)

// Skipped counts what a search passed over.
type Skipped struct {
	Binary     int // files with a NUL byte in their first 8 KiB
	TooLarge   int // files larger than Options.MaxFileSize
	Unreadable int // files and folders that could not be read, broken links, pipes and other special files
	Withheld   int // files Options.Withhold held back
	Outside    int // symbolic links to places outside the workspace
	maxSize    int64
}

func (s *Skipped) add(o Skipped) {
	s.Binary += o.Binary
	s.TooLarge += o.TooLarge
	s.Unreadable += o.Unreadable
	s.Withheld += o.Withheld
	s.Outside += o.Outside
}

// String says what was skipped, "" for nothing.
func (s Skipped) String() string {
	var parts []string
	if s.Binary > 0 {
		parts = append(parts, count(s.Binary, "binary file", "binary files"))
	}
	if s.TooLarge > 0 {
		over := "the size limit"
		if s.maxSize > 0 {
			over = size(s.maxSize)
		}
		parts = append(parts, count(s.TooLarge, "file", "files")+" over "+over)
	}
	if s.Unreadable > 0 {
		parts = append(parts, count(s.Unreadable, "unreadable file or folder", "unreadable files or folders"))
	}
	if s.Withheld > 0 {
		parts = append(parts, count(s.Withheld, "withheld file", "withheld files")+" (not shown to the model)")
	}
	if s.Outside > 0 {
		parts = append(parts, count(s.Outside, "symbolic link", "symbolic links")+" to outside the workspace")
	}
	if len(parts) == 0 {
		return ""
	}
	return "skipped: " + strings.Join(parts, ", ")
}

// count is "1 file", "12 files", "1,200 files".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return human.Thousands(n) + " " + many
}

func itoa(n int) string { return strconv.Itoa(n) }

// size is a byte count for people: "812 B", "4.1 KB", "2.3 MB".
func size(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/k)) + " KB"
	case n < k*k*k:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(k*k))) + " MB"
	}
	return trimZero(fmt.Sprintf("%.1f", float64(n)/(k*k*k))) + " GB"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

func isAbs(p string) bool        { return filepath.IsAbs(p) }
func cleanPath(p string) string  { return filepath.Clean(p) }
func baseName(rel string) string { return rel[strings.LastIndexByte(rel, '/')+1:] }

// joinRel is the absolute path of rel (slash-separated) under dir.
func joinRel(dir, rel string) string {
	if rel == "" {
		return dir
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}
