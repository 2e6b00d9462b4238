//go:build linux

package procmem

import (
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"
)

func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`RssFile:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no RssFile in /proc/self/status")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// The test binary is itself an ET_EXEC image: releasing its pages must
// lower its resident file pages and leave it running correctly (the code
// and tables below come back from the file).
func TestReleaseImage(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := plainImage(exe); err != nil || !plain {
		// A position-independent test binary (-buildmode=pie): nothing
		// may be released.
		if n, err := ReleaseImage(); n != 0 || err != nil {
			t.Fatalf("released %d bytes of a position-independent image (err %v)", n, err)
		}
		t.Skipf("%s is not a plain ET_EXEC image (err %v): checked that nothing is released", exe, err)
	}
	before := rssFileKB(t)
	n, err := ReleaseImage()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	t.Logf("released %d KB of mappings; resident file pages %d KB -> %d KB", n>>10, before, after)
	if n == 0 {
		t.Fatal("nothing released: the test binary should be a plain ET_EXEC image")
	}
	if after >= before {
		t.Fatalf("resident file pages did not drop: %d KB -> %d KB", before, after)
	}
	// Code, type data and function tables used again after the release.
	xs := []string{"pear", "apple", "fig"}
	sort.Strings(xs)
	if xs[0] != "apple" || regexp.MustCompile(`^a.p`).FindString("apple") != "app" {
		t.Fatalf("wrong results after the release: %v", xs)
	}
}

func TestPlainImageRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"empty":  "",
		"script": "#!/bin/sh\necho hi\n" + string(make([]byte, 64)),
		"pie":    "\x7fELF\x02\x01\x01" + string(make([]byte, 9)) + "\x03\x00" + string(make([]byte, 46)),
	} {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if ok, _ := plainImage(p); ok {
			t.Errorf("%s: taken for a plain ET_EXEC image", name)
		}
	}
}
