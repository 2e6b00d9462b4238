package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseGoTakesMedians(t *testing.T) {
	out := `goos: linux
BenchmarkEdits100KB-2   	      20	   3000000 ns/op
BenchmarkEdits100KB-2   	      20	   9000000 ns/op
BenchmarkEdits100KB-2   	      20	   4000000 ns/op
BenchmarkEdits10MB-2    	      20	  10000000 ns/op
BenchmarkDaemonContextGetDuringTurn-2 	 200	 0.9 p50-ms	 6.5 p99-ms	 0 ns/op
BenchmarkResume1000Messages-2 	 20	 4310000 ns/op
BenchmarkSearch100kMessages/broad-2 	 20	 60000000 ns/op
BenchmarkSearch100kMessages/narrow-2 	 20	 2000000 ns/op
BenchmarkPostgresSearch100kMessages/broad-2 	 20	 90000000 ns/op
BenchmarkPostgresSearch100kMessages/narrow-2 	 20	 5000000 ns/op
BenchmarkPostgresResume1000Messages-2 	 20	 5000000 ns/op
PASS`
	f := figures{}
	lines := parseGo(strings.NewReader(out), f)
	if len(lines) != 11 {
		t.Fatalf("%d benchmark lines", len(lines))
	}
	if got := f["BenchmarkEdits100KB ns/op"]; got.value != 4000000 || got.runs != 3 {
		t.Errorf("median of three runs: %+v", got)
	}
	if got := f["BenchmarkDaemonContextGetDuringTurn p99-ms"]; got.value != 6.5 {
		t.Errorf("custom metric: %+v", got)
	}
	want := map[string]string{
		"1,000 edits: 10 MB vs 100 KB":                                "2.50× (10 ms vs 4 ms) met",
		"`ctxls.context.get` while a turn streams (p99)":              "6.5 ms not met",
		"search 100,000 messages":                                     "broad 60 ms, narrow 2 ms not met",
		"list 10,000 sessions":                                        " missing",
		"resume a 1,000-message session":                              "4.31 ms met",
		"PostgreSQL store: search 100,000 messages, vs SQLite":        "broad 1.50× (90 vs 60 ms), narrow 2.50× (5 vs 2 ms) not met",
		"PostgreSQL store: resume a 1,000-message session, vs SQLite": "1.16× (5 vs 4.31 ms) met",
		"PostgreSQL store: list 10,000 sessions, vs SQLite":           " missing",
	}
	for _, tg := range targets {
		w, ok := want[tg.measure]
		if !ok {
			continue
		}
		shown, met, found := tg.eval(f)
		got := shown
		switch {
		case !found:
			got += " missing"
		case met:
			got += " met"
		default:
			got += " not met"
		}
		if got != w {
			t.Errorf("%s: %q, want %q", tg.measure, got, w)
		}
	}
}

func TestParseDriver(t *testing.T) {
	f := figures{}
	parseDriver(`server: /tmp/ctxls serve (10 runs; median [min–max])
spawn → initialize reply:              23.6 ms [18.2–41.6]
200 KB open + 1,000 edits + request:    75.5 ms [65.0–160.7]
peak resident memory (tree):           17.4 MB [17.1–18.7]`, f)
	for _, tg := range targets[:3] {
		shown, met, found := tg.eval(f)
		if !found {
			t.Errorf("%s not found", tg.measure)
		}
		t.Logf("%s: %s %v", tg.measure, shown, met)
	}
	if s, met, _ := targets[2].eval(f); s != "17.4 MB" || !met {
		t.Errorf("peak memory: %s %v", s, met)
	}
	if s, met, _ := targets[0].eval(f); s != "23.6 ms" || met {
		t.Errorf("start-up: %s %v", s, met)
	}
}

func TestIdleMemoryShowsItsAnonymousPart(t *testing.T) {
	f := figures{}
	parseDriver(`server: /tmp/ctxls serve (10 runs; median [min–max])
idle resident memory after initialize:    17.3 MB [17.1–17.6]
  of it anonymous (not the binary's pages):    2.9 MB [2.8–3.1]`, f)
	var idle target
	for _, tg := range targets {
		if strings.HasPrefix(tg.measure, "idle resident memory") {
			idle = tg
		}
	}
	if s, met, found := idle.eval(f); !found || met || s != "17.3 MB (2.9 MB of it anonymous)" {
		t.Errorf("idle memory: %q met %v found %v", s, met, found)
	}
}

// TestStartupFloor: the start-up row names the floor ctxls's libraries set
// when the run measured it, and the reference row says what ctxls adds.
func TestStartupFloor(t *testing.T) {
	f := figures{}
	parseDriver("spawn → initialize reply:              6.0 ms [5.0–7.0]", f)
	m, d := figures{}, figures{}
	parseDriver("spawn → initialize reply:              2.0 ms [1.0–3.0]", m)
	parseDriver("spawn → initialize reply:              4.0 ms [3.0–5.0]", d)
	for k, v := range m {
		f["minimal "+k] = v
	}
	for k, v := range d {
		f["minimaldeps "+k] = v
	}
	var got []string
	for _, tg := range targets {
		if strings.Contains(tg.measure, "minimal") {
			shown, met, found := tg.eval(f)
			got = append(got, fmt.Sprintf("%s %v %v", shown, met, found))
		}
	}
	want := []string{
		"3.00× (6 vs 2 ms); the minimal server linking ctxls's libraries: 2.00× false true",
		"1.50× (6 vs 4 ms) true true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSearchRows: the search package's rows read the ratios its
// benchmarks report.
func TestSearchRows(t *testing.T) {
	f := figures{}
	parseGo(strings.NewReader(`BenchmarkVsRipgrep/literal-2   10  444310655 ns/op  1.046 cpu-ratio  226.4 ours-cpu-ms  200.4 ours-ms  0.8965 ratio  216.4 rg-cpu-ms  223.5 rg-ms
BenchmarkVsRipgrep/regexp-2   10  349715272 ns/op  0.8886 cpu-ratio  197.1 ours-cpu-ms  400 ours-ms  2.5 ratio  221.8 rg-cpu-ms  160 rg-ms
BenchmarkGrepGorootBuffers200-2  20  236526730 ns/op  1.002 ratio  118.0 with-ms  117.8 without-ms
BenchmarkGrepGorootMemory/literal-2  3  287198031 ns/op  8.441 peak-above-idle-MB
BenchmarkGrepGorootMemory/broad-2  3  332281490 ns/op  8.734 peak-above-idle-MB`), f)
	want := []string{
		"0.90× (200 vs 224 ms); CPU time 1.05× met",
		"2.50× (400 vs 160 ms); CPU time 0.89× not met",
		" missing",
		"1.00× (118 vs 118 ms) met",
		"broad 8.73 MB, literal 8.44 MB met",
	}
	var got []string
	for _, tg := range targets {
		if !strings.Contains(tg.measure, "ripgrep") && !strings.Contains(tg.measure, "rg --files") && !strings.HasPrefix(tg.measure, "grep") {
			continue
		}
		shown, met, found := tg.eval(f)
		switch {
		case !found:
			shown += " missing"
		case met:
			shown += " met"
		default:
			shown += " not met"
		}
		got = append(got, shown)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
