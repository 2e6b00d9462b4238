package tool

import (
	"runtime"
	"strings"
	"testing"
)

// TestOneLineEditOfLargeTextCopiesNone: finding a one-line edit of a
// 10 MB text and its diff allocate far less than the text (the new text
// is built only when a door asks for it: workspace/applyEdit sends the
// changed span). Copying the 10 MB per edit cost page faults and a GC in
// the edit's path (bench/notes.md, "EditApply10MB").
func TestOneLineEditOfLargeTextCopiesNone(t *testing.T) {
	line := "\tfmt.Println(\"a line of some Go code, é\") // 😀\n"
	text := "package main\n\nfunc main() {\n" + strings.Repeat(line, 10<<20/len(line)) + "\tmarker()\n}\n"
	least := uint64(1 << 62)
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start, oldEnd, ins, err := replaceIn("big.go", text, "\tmarker()\n", "\tmarker(1)\n", false)
		if err != nil {
			t.Fatal(err)
		}
		diff, _ := unifiedDiff("big.go", text, false, start, oldEnd, ins)
		r := EditRequest{OldText: text, Start: start, OldEnd: oldEnd, Inserted: ins}
		n := r.NewLen()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
		if !strings.Contains(diff, "-\tmarker()\n+\tmarker(1)\n") || n != len(text)+1 {
			t.Fatalf("diff %q, new length %d", diff, n)
		}
	}
	if least > 64<<10 {
		t.Errorf("a one-line edit of a 10 MB text allocated %d bytes", least)
	}
	r := EditRequest{OldText: "abc", Start: 1, OldEnd: 2, Inserted: "XY", whole: &wholeText{}}
	if got := r.NewText(); got != "aXYc" || r.NewText() != got || r.NewLen() != len(got) {
		t.Errorf("NewText %q, NewLen %d", got, r.NewLen())
	}
}
