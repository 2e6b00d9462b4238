package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSystemFilesNeverRead: /proc/self/environ (the daemon's API key) is
// refused by a guard whose workspace folder is /, even when named by the
// user, and by ReadLimited by its path, and on Linux through a link by its
// file system.
func TestSystemFilesNeverRead(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	env := "/proc/self/environ"
	link := filepath.Join(t.TempDir(), "env.txt")
	if err := os.Symlink(env, link); err != nil {
		t.Fatal(err)
	}
	g := &Guard{Roots: []string{"/"}, UserFiles: map[string]bool{env: true}}
	for _, p := range []string{env, "/proc", "/sys/kernel", "/dev/null", link} {
		if g.Refusal(p) == "" {
			t.Errorf("%s may be read", p)
		}
	}
	for _, p := range []string{"/etc/hostname", "/devices.txt", "/process"} {
		if SystemPath(p) {
			t.Errorf("%s is taken for a system file", p)
		}
	}
	if _, err := ReadLimited(env, 100); !errors.Is(err, ErrSystemFile) {
		t.Errorf("ReadLimited(%s): %v", env, err)
	}
	if _, err := ReadLimited(link, 100); runtime.GOOS == "linux" && !errors.Is(err, ErrSystemFile) {
		t.Errorf("ReadLimited(%s): %v", link, err)
	}
}
