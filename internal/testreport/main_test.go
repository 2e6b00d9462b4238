package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReport: a passing package is one ok line; a failing test's output is
// shown, a passing test's is not; a package that does not build shows its
// errors; the slowest come last, slowest first.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestQuick"}`,
		`{"Action":"output","Package":"m/a","Test":"TestQuick","Output":"=== RUN   TestQuick\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestQuick","Output":"    a_test.go:9: chatter\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestQuick","Elapsed":0.5}`,
		`{"Action":"output","Package":"m/a","Output":"PASS\n"}`,
		`{"Action":"pass","Package":"m/a","Elapsed":1.5}`,
		`{"Action":"run","Package":"m/b","Test":"TestSlow"}`,
		`{"Action":"output","Package":"m/b","Test":"TestSlow","Output":"    b_test.go:7: want 2, got 3\n"}`,
		`{"Action":"output","Package":"m/b","Test":"TestSlow","Output":"--- FAIL: TestSlow (9.00s)\n"}`,
		`{"Action":"fail","Package":"m/b","Test":"TestSlow","Elapsed":9}`,
		`{"Action":"output","Package":"m/b","Output":"FAIL\n"}`,
		`{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t9.100s\n"}`,
		`{"Action":"fail","Package":"m/b","Elapsed":9.1}`,
		`{"ImportPath":"m/c","Action":"build-output","Output":"c/c.go:3:1: syntax error\n"}`,
		`{"ImportPath":"m/c","Action":"build-fail"}`,
		`FAIL	m/c [build failed]`,
	}, "\n")
	var out bytes.Buffer
	report(strings.NewReader(in), &out, 5, 5)
	got := out.String()
	for _, want := range []string{
		"ok  \tm/a\t1.500s\n",
		"    b_test.go:7: want 2, got 3\n--- FAIL: TestSlow (9.00s)\n",
		"FAIL\tm/b\t9.100s\n",
		"c/c.go:3:1: syntax error\n",
		"FAIL\tm/c [build failed]\n",
		"== slowest packages\n     9.1 s  m/b\n     1.5 s  m/a\n",
		"     9.0 s  m/b TestSlow\n     0.5 s  m/a TestQuick\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") || strings.Count(got, "FAIL\tm/b") != 1 {
		t.Errorf("a passing test's output, or the package's FAIL line twice:\n%s", got)
	}
}
