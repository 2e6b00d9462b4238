package session

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxls/ctxls/api"
)

// DefaultSoftLimitMB is the data directory's default soft limit, in MiB.
const DefaultSoftLimitMB = 1024

// SoftLimitEnv names the environment variable that sets the soft limit in
// MiB when neither the command line nor the editor does.
const SoftLimitEnv = "CTXLS_STORAGE_SOFT_LIMIT_MB"

// ParseLimitMB parses a soft limit in MiB: a whole number of at least 1;
// "" gives 0 (not set).
func ParseLimitMB(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1<<30 {
		return 0, fmt.Errorf("storage soft limit %q: want a whole number of MiB, at least 1", Truncate(s, 40))
	}
	return n, nil
}

// DiskUsage is how much the data directory holds (api's).
type DiskUsage = api.DiskUsage

// DirSize is the size of the regular files under dir, symbolic links not
// followed; what cannot be read counts as nothing.
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // skip what cannot be read; a missing dir is 0
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Removed is a file the storage clean-up removed.
type Removed struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"` // the session's
	Name      string    `json:"name"`  // below the session's data/, "/"-separated
	Size      int64     `json:"size"`
	ModTime   time.Time `json:"modTime"`
}

// Cleanup is what EnforceSoftLimit found and did.
type Cleanup struct {
	Limit   int64     `json:"limit"`  // bytes
	Before  int64     `json:"before"` // the data directory's size before
	After   int64     `json:"after"`  // and after
	Removed []Removed `json:"removed"`
}

// Summary says what a clean-up removed, for people: "" when nothing was.
// At most ten names are listed.
func (c *Cleanup) Summary() string {
	if c == nil || len(c.Removed) == 0 {
		return ""
	}
	var freed int64
	names := make([]string, 0, min(len(c.Removed), 10))
	for i, r := range c.Removed {
		freed += r.Size
		if i < 10 {
			names = append(names, fmt.Sprintf("%q data/%s", OneLineTitle(r.Title), r.Name))
		}
	}
	if n := len(c.Removed) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("and %d more", n))
	}
	noun := "files"
	if len(c.Removed) == 1 {
		noun = "file"
	}
	msg := fmt.Sprintf("the data directory was over its soft limit of %s (%s), so %d intermediate %s in data/ folders, the oldest, were removed (%s freed): %s.",
		mib(c.Limit), Bytes(c.Before), len(c.Removed), noun, Bytes(freed), strings.Join(names, ", "))
	if c.After > c.Limit {
		msg += fmt.Sprintf(" It is still over the limit (%s): the rest is the user's files, results, scripts and messages, which are never removed; see ctxls sessions du.", Bytes(c.After))
	}
	return msg
}

func OneLineTitle(t string) string { return Truncate(strings.Join(strings.Fields(t), " "), 60) }

// mib states a byte count that is a whole number of MiB as "1024 MiB".
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return Bytes(n)
}
