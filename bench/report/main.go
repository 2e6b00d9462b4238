// Command report turns the raw output of the benchmark suite into
// docs/benchmarks.md: the machine, the commands, the figures, and issue 5's
// targets, each marked met or not met from the figures of this run (never
// from a hand-written status). bench/run calls it.
//
//	go run ./bench/report -lsp lsp.txt -go go.txt -lspcmd '...' -gocmd '...' -notes bench/notes.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// figure is one measured value.
type figure struct {
	value float64
	unit  string
	runs  int // how many runs the median was taken over
}

// figures are keyed by "BenchmarkName unit" (Go benchmarks, the median over
// -count runs) or by the LSP driver's label.
type figures map[string]figure

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// parseGo reads `go test -bench` output; a benchmark run several times
// (-count) is reduced to the median of each metric.
func parseGo(r io.Reader, into figures) []string {
	samples := map[string][]float64{}
	var order, lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		lines = append(lines, sc.Text())
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			key := m[1] + " " + f[i+1]
			if _, ok := samples[key]; !ok {
				order = append(order, key)
			}
			samples[key] = append(samples[key], v)
		}
	}
	for _, k := range order {
		s := samples[k]
		slices.Sort(s)
		into[k] = figure{value: s[len(s)/2], unit: k[strings.IndexByte(k, ' ')+1:], runs: len(s)}
	}
	return lines
}

var driverLine = regexp.MustCompile(`^\s*([^:\[]+?):\s+([0-9.]+)\s*(ms|MB|s|KB)\b`)

// parseDriver reads bench/lspbench output: "label:  12.3 ms [min–max]".
func parseDriver(text string, into figures) {
	for _, l := range strings.Split(text, "\n") {
		if m := driverLine.FindStringSubmatch(l); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			into[strings.TrimSpace(m[1])] = figure{value: v, unit: m[3]}
		}
	}
}

// target is one line of issue 5's table.
type target struct {
	measure string
	limit   string
	// eval returns the figure as shown, whether it meets the target, and
	// false in found when the run did not produce it.
	eval func(f figures) (shown string, met, found bool)
}

// lookup finds a figure by exact key, or the driver label starting with key.
func lookup(f figures, key string) (figure, bool) {
	if v, ok := f[key]; ok {
		return v, true
	}
	for k, v := range f {
		if strings.HasPrefix(k, key) {
			return v, true
		}
	}
	return figure{}, false
}

func toMS(v figure) float64 {
	switch v.unit {
	case "ns/op":
		return v.value / 1e6
	case "s":
		return v.value * 1000
	}
	return v.value
}

// atMost is a target "key <= limit", in milliseconds or the figure's unit.
func atMost(key string, limit float64, unit string) func(figures) (string, bool, bool) {
	return func(f figures) (string, bool, bool) {
		v, ok := lookup(f, key)
		if !ok {
			return "", false, false
		}
		x := v.value
		if unit == "ms" {
			x = toMS(v)
		}
		return fmt.Sprintf("%.3g %s", x, unit), x <= limit, true
	}
}

// worstOf is atMost over every Go benchmark whose name starts with prefix
// (sub-benchmarks), judged by the slowest.
func worstOf(prefix string, limit float64) func(figures) (string, bool, bool) {
	return func(f figures) (string, bool, bool) {
		var parts []string
		met, found := true, false
		keys := make([]string, 0, len(f))
		for k := range f {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !strings.HasPrefix(k, prefix) || !strings.HasSuffix(k, " ns/op") {
				continue
			}
			found = true
			x := toMS(f[k])
			met = met && x <= limit
			name := ""
			bench := strings.TrimSuffix(k, " ns/op")
			if i := strings.IndexByte(bench, '/'); i >= 0 {
				name = bench[i+1:]
			}
			if name == "" {
				parts = append(parts, fmt.Sprintf("%.3g ms", x))
			} else {
				parts = append(parts, fmt.Sprintf("%s %.3g ms", name, x))
			}
		}
		return strings.Join(parts, ", "), met, found
	}
}

// ratioOf is a target "the PostgreSQL store within limit× of SQLite in the
// same run": every figure whose key starts with pg is paired with the one
// that has base in its place (sub-benchmarks by name), judged by the worst
// ratio.
func ratioOf(pg, base, metric string, limit float64) func(figures) (string, bool, bool) {
	return func(f figures) (string, bool, bool) {
		keys := make([]string, 0, len(f))
		for k := range f {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		met, found := true, false
		for _, k := range keys {
			if !strings.HasPrefix(k, pg) || !strings.HasSuffix(k, " "+metric) {
				continue
			}
			b, ok := f[base+strings.TrimPrefix(k, pg)]
			if !ok || b.value <= 0 {
				continue
			}
			found = true
			r := f[k].value / b.value
			met = met && r <= limit
			name := strings.TrimSuffix(strings.TrimPrefix(k, pg), " "+metric)
			name = strings.TrimPrefix(name, "/")
			if name != "" {
				name += " "
			}
			parts = append(parts, fmt.Sprintf("%s%.2f× (%.3g vs %.3g ms)", name, r, toMS(f[k]), toMS(b)))
		}
		return strings.Join(parts, ", "), met, found
	}
}

var targets = []target{
	{"spawn → initialize reply (median)", "≤ 10 ms", atMost("spawn → initialize reply", 10, "ms")},
	{"200 KB open + 1,000 edits + round trip (median)", "≤ 50 ms", atMost("200 KB open + 1,000 edits", 50, "ms")},
	{"peak resident memory for that run", "≤ 30 MB", atMost("peak resident memory", 30, "MB")},
	{"1,000 edits: 10 MB vs 100 KB", "≤ 3×", func(f figures) (string, bool, bool) {
		a, ok1 := f["BenchmarkEdits10MB ns/op"]
		b, ok2 := f["BenchmarkEdits100KB ns/op"]
		if !ok1 || !ok2 || b.value == 0 {
			return "", false, false
		}
		r := a.value / b.value
		return fmt.Sprintf("%.2f× (%.3g ms vs %.3g ms)", r, a.value/1e6, b.value/1e6), r <= 3, true
	}},
	{"`ctxls.context.get` while a turn streams (p99)", "≤ 5 ms", atMost("BenchmarkDaemonContextGetDuringTurn p99-ms", 5, "ms")},
	{"daemon overhead on time to first delta (median)", "≤ 2 ms", atMost("BenchmarkDaemonFirstDeltaOverhead overhead-ms", 2, "ms")},
	{"model input, 50 × 100 KB relevant files, first turn (cold)", "≤ 20 ms", worstOf("BenchmarkSystemCold", 20)},
	{"model input, 50 × 100 KB relevant files, later turns", "≤ 20 ms", worstOf("BenchmarkSystem50x100KB", 20)},
	{"list 10,000 sessions", "≤ 20 ms", worstOf("BenchmarkList10kSessions", 20)},
	{"search 100,000 messages", "≤ 50 ms", worstOf("BenchmarkSearch100k", 50)},
	{"resume a 1,000-message session", "≤ 30 ms", worstOf("BenchmarkResume1000Messages", 30)},
	{"200 open 100 KB files (peak resident)", "≤ 60 MB", atMost("BenchmarkDaemonMemory200Files peak-MB", 60, "MB")},
	{"`ctxls acp`: spawn → initialize reply (median)", "≤ 10 ms", atMost("BenchmarkACPInitialize start-ms", 10, "ms")},
	{"`ctxls acp` overhead on the first agent_message_chunk (median)", "≤ 2 ms", atMost("BenchmarkACPFirstChunkOverhead overhead-ms", 2, "ms")},
	// Issue 14: costs that stay flat as work grows.
	{"daemon overhead on time to first delta, 100-message session (median)", "≤ 1 ms", atMost("BenchmarkDaemonFirstDeltaOverheadHistory/messages=100 overhead-ms", 1, "ms")},
	{"same, 10,000-message session vs 100-message session", "≤ 1.2×", ratioOf("BenchmarkDaemonFirstDeltaOverheadHistory/messages=10000", "BenchmarkDaemonFirstDeltaOverheadHistory/messages=100", "overhead-ms", 1.2)},
	{"spawn → initialize reply vs a minimal Go stdio server (median, same driver, same run)", "≤ 1.5×", func(f figures) (string, bool, bool) {
		a, ok1 := lookup(f, "spawn → initialize reply")
		b, ok2 := f["minimal spawn → initialize reply"]
		if !ok1 || !ok2 || b.value == 0 {
			return "", false, false
		}
		r := a.value / b.value
		shown := fmt.Sprintf("%.2f× (%.3g vs %.3g ms)", r, a.value, b.value)
		if d, ok := f["minimaldeps spawn → initialize reply"]; ok && d.value > 0 {
			// The floor ctxls's libraries set (see the next row).
			shown += fmt.Sprintf("; the minimal server linking ctxls's libraries: %.2f×", d.value/b.value)
		}
		return shown, r <= 1.5, true
	}},
	// Not a target: what the libraries cost by themselves (bench/minimal
	// built with -tags deps runs their initialisers and nothing else), and
	// so what ctxls's own start-up adds to a process that links them.
	{"spawn → initialize reply vs the minimal server linking ctxls's libraries (`bench/minimal -tags deps`): what ctxls's own start-up adds", "—", func(f figures) (string, bool, bool) {
		a, ok1 := lookup(f, "spawn → initialize reply")
		d, ok2 := f["minimaldeps spawn → initialize reply"]
		if !ok1 || !ok2 || d.value == 0 {
			return "", false, false
		}
		return fmt.Sprintf("%.2f× (%.3g vs %.3g ms)", a.value/d.value, a.value, d.value), true, true
	}},
	{"idle resident memory after initialize (median)", "≤ 10 MB", func(f figures) (string, bool, bool) {
		shown, met, found := atMost("idle resident memory after initialize", 10, "MB")(f)
		// What of it is the daemon's own memory, not pages of its binary
		// mapped from the page cache (shared by every ctxls, reclaimable).
		if a, ok := f["of it anonymous (not the binary's pages)"]; found && ok && a.value > 0 {
			shown += fmt.Sprintf(" (%.3g MB of it anonymous)", a.value)
		}
		return shown, met, found
	}},
	{"resident memory after 1,000 turns across 100 sessions (5 relevant files each) vs after the first 100", "≤ 1.2×", func(f figures) (string, bool, bool) {
		r, ok := f["BenchmarkDaemonTurnsMemory ratio"]
		a, ok2 := f["BenchmarkDaemonTurnsMemory rss1000-MB"]
		b, ok3 := f["BenchmarkDaemonTurnsMemory rss100-MB"]
		if !ok || !ok2 || !ok3 {
			return "", false, false
		}
		return fmt.Sprintf("%.2f× (%.1f vs %.1f MB)", r.value, a.value, b.value), r.value <= 1.2, true
	}},
	{"`test/run` (every test) wall time", "≤ 5 min", func(f figures) (string, bool, bool) {
		v, ok := f["go test wall s"]
		if !ok {
			return "", false, false
		}
		return fmt.Sprintf("%.0f s", v.value), v.value <= 300, true
	}},
	// Issue 21: MCP servers start lazily, and a tool call costs little.
	{"spawn → initialize reply with three MCP servers configured, vs none (medians, alternately)", "≤ 1.1×", func(f figures) (string, bool, bool) {
		r, ok := f["BenchmarkDaemonStartMCP ratio"]
		a, ok2 := f["BenchmarkDaemonStartMCP three-ms"]
		n, ok3 := f["BenchmarkDaemonStartMCP none-ms"]
		if !ok || !ok2 || !ok3 {
			return "", false, false
		}
		return fmt.Sprintf("%.2f× (%.3g vs %.3g ms)", r.value, a.value, n.value), r.value <= 1.1, true
	}},
	{"an MCP tool call's overhead beyond the server's own time (median)", "≤ 2 ms", atMost("BenchmarkMCPToolCallOverhead overhead-ms", 2, "ms")},
	// Issue 32: the model's commands.
	{"run_command's overhead beyond sh -c of the same command, spawn to exit (medians, alternately)", "≤ 5 ms", atMost("BenchmarkRunCommandOverhead overhead-ms", 5, "ms")},
	// Issue 22: the model's edits applied through the editor.
	{"an edit of a 10 MB open buffer: the provider's answer → workspace/applyEdit (median)", "≤ 5 ms", atMost("BenchmarkEditApply10MB apply-ms", 5, "ms")},
	{"the undo of a turn that changed 100 open files: the command → the last workspace/applyEdit (median)", "≤ 100 ms", atMost("BenchmarkUndo100Files undo-ms", 100, "ms")},
	// Issue 23: model input a provider's prompt cache can serve.
	{"input reuse: a turn's input that repeats the previous turn's from its beginning, 20 turns, 5 relevant files of 20 KB, one edited before every third turn (median)", "≥ 80%", func(f figures) (string, bool, bool) {
		v, ok := f["BenchmarkInputReuse reuse-median-pct"]
		e, ok2 := f["BenchmarkInputReuse reuse-edit-median-pct"]
		if !ok || !ok2 {
			return "", false, false
		}
		return fmt.Sprintf("%.1f%% (turns after an edit: %.1f%%)", v.value, e.value), v.value >= 80, true
	}},
	{"input reuse: the same, least on a turn no edit preceded", "≥ 98%", func(f figures) (string, bool, bool) {
		v, ok := f["BenchmarkInputReuse reuse-quiet-min-pct"]
		if !ok {
			return "", false, false
		}
		return fmt.Sprintf("%.1f%%", v.value), v.value >= 98, true
	}},
	{"PostgreSQL store: list 10,000 sessions, vs SQLite", "≤ 2×", ratioOf("BenchmarkPostgresList10kSessions", "BenchmarkList10kSessions", "ns/op", 2)},
	{"PostgreSQL store: search 100,000 messages, vs SQLite", "≤ 2×", ratioOf("BenchmarkPostgresSearch100kMessages", "BenchmarkSearch100kMessages", "ns/op", 2)},
	{"PostgreSQL store: resume a 1,000-message session, vs SQLite", "≤ 2×", ratioOf("BenchmarkPostgresResume1000Messages", "BenchmarkResume1000Messages", "ns/op", 2)},
	{"PostgreSQL store: daemon overhead on time to first delta, vs SQLite", "≤ 2×", ratioOf("BenchmarkDaemonFirstDeltaOverheadPostgres", "BenchmarkDaemonFirstDeltaOverhead", "overhead-ms", 2)},
	// The model's search tools (package search) over the Go toolchain's
	// source tree, against ripgrep in the same run, alternately.
	{"grep literal (`func main`, $GOROOT/src) vs ripgrep (median wall time)", "≤ 1.5×", pairRatio("BenchmarkVsRipgrep/literal", "ours-ms", "rg-ms", 1.5)},
	{"grep regexp (`func \\w+Handler\\(`) vs ripgrep", "≤ 2×", pairRatio("BenchmarkVsRipgrep/regexp", "ours-ms", "rg-ms", 2)},
	{"find_files `**/*.go` vs `rg --files -g '*.go'`", "≤ 1.5×", pairRatio("BenchmarkVsRipgrep/files", "ours-ms", "rg-ms", 1.5)},
	{"grep with 200 open 100 KB buffers vs without", "≤ 1.1×", pairRatio("BenchmarkGrepGorootBuffers200", "with-ms", "without-ms", 1.1)},
	{"grep: peak resident memory above idle ($GOROOT/src; `func main`, and `e` matching a million lines)", "≤ 20 MB", worstMetric("BenchmarkGrepGorootMemory", "peak-above-idle-MB", "MB", 20)},
	{"the daemon's peak resident memory while its model searches $GOROOT/src (grep ×3, find_files), above its idle between turns", "≤ 20 MB", worstMetric("BenchmarkDaemonGrepMemory", "peak-above-idle-MB", "MB", 20)},
}

// pairRatio is a target on a benchmark that times two things alternately
// and reports both medians (metrics a and b) and their ratio; its CPU-time
// ratio, when reported, is shown beside it.
func pairRatio(bench, a, b string, limit float64) func(figures) (string, bool, bool) {
	return func(f figures) (string, bool, bool) {
		r, ok := f[bench+" ratio"]
		x, ok2 := f[bench+" "+a]
		y, ok3 := f[bench+" "+b]
		if !ok || !ok2 || !ok3 {
			return "", false, false
		}
		shown := fmt.Sprintf("%.2f× (%.3g vs %.3g ms)", r.value, x.value, y.value)
		if c, ok := f[bench+" cpu-ratio"]; ok {
			shown += fmt.Sprintf("; CPU time %.2f×", c.value)
		}
		return shown, r.value <= limit, true
	}
}

// worstMetric is a target "metric <= limit" over a benchmark's
// sub-benchmarks, judged by the largest.
func worstMetric(prefix, metric, unit string, limit float64) func(figures) (string, bool, bool) {
	return func(f figures) (string, bool, bool) {
		keys := make([]string, 0, len(f))
		for k := range f {
			if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, " "+metric) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var parts []string
		met := true
		for _, k := range keys {
			name := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(k, prefix), " "+metric), "/")
			if name != "" {
				name += " "
			}
			parts = append(parts, fmt.Sprintf("%s%.3g %s", name, f[k].value, unit))
			met = met && f[k].value <= limit
		}
		return strings.Join(parts, ", "), met, len(keys) > 0
	}
}

func main() {
	lspFile := flag.String("lsp", "", "bench/lspbench output")
	goFile := flag.String("go", "", "go test -bench output")
	lspCmd := flag.String("lspcmd", "", "the driver command, as shown")
	goCmd := flag.String("gocmd", "", "the go test command, as shown")
	notes := flag.String("notes", "", "markdown appended after the targets (analysis, history)")
	minimalFile := flag.String("minimal", "", "bench/lspbench output for bench/minimal (the start-up baseline)")
	minimalDepsFile := flag.String("minimaldeps", "", "bench/lspbench output for bench/minimal built with -tags deps (the libraries' floor)")
	firstFile := flag.String("first", "", "bench/lspbench -first-request output for ctxls (the first command, sent the moment initialized is)")
	testTime := flag.String("testtime", "", "a file holding the wall time in seconds of the README's test command")
	flag.Parse()
	lspOut, err := os.ReadFile(*lspFile)
	check(err)
	f := figures{}
	parseDriver(string(lspOut), f)
	// The baselines' figures go in under a prefix: "minimal spawn → …".
	minimalOut := readDriver(*minimalFile, "minimal ", f)
	minimalDepsOut := readDriver(*minimalDepsFile, "minimaldeps ", f)
	firstOut := readDriver(*firstFile, "", nil)
	gf, err := os.Open(*goFile)
	check(err)
	if *testTime != "" {
		if b, err := os.ReadFile(*testTime); err == nil {
			if v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
				f["go test wall s"] = figure{value: v, unit: "s"}
			}
		}
	}
	goLines := parseGo(gf, f)
	gf.Close()

	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Written by `bench/run` on %s: %s, %s, %s.\n", time.Now().UTC().Format("2006-01-02"), cpu(), memory(), runtime.Version())
	fmt.Fprintln(w, "The status column is computed from the figures below by `bench/report`. Timed tests are never used for")
	fmt.Fprintln(w, "these targets; CI runs `bench/run --short` only to show the suite works.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Targets (issues 5, 12, 13, 14, 21, 22 and 23)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| measure | target | this run | status |")
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	for _, t := range targets {
		shown, met, found := t.eval(f)
		status := "met"
		switch {
		case !found:
			shown, status = "—", "**not measured in this run**"
		case t.limit == "—":
			status = "for reference" // not a target
		case !met:
			status = "**not met**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.measure, t.limit, shown, status)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "## LSP driver (`%s`)\n\n```\n%s\n```\n\n", *lspCmd, strings.TrimSpace(string(lspOut)))
	if minimalOut != nil {
		fmt.Fprintf(w, "The start-up baseline, `bench/minimal` (a Go stdio server that answers initialize and nothing else), with the same driver in the same run:\n\n```\n%s\n```\n\n", strings.TrimSpace(string(minimalOut)))
	}
	if minimalDepsOut != nil {
		fmt.Fprintf(w, "The same server built with `-tags deps` (`bench/minimal/deps.go`: it links every library ctxls links and does nothing with them), in the same run:\n\n```\n%s\n```\n\n", strings.TrimSpace(string(minimalDepsOut)))
	}
	if firstOut != nil {
		fmt.Fprintf(w, "The first command, `ctxls.session.list` sent the moment `initialized` is (`lspbench -first-request workspace/executeCommand`), in the same run: the store opens after the initialize answer, so a command sent at once waits for the rest of the open.\n\n```\n%s\n```\n\n", strings.TrimSpace(string(firstOut)))
	}
	fmt.Fprintf(w, "## Go benchmarks (`%s`)\n\n", *goCmd)
	fmt.Fprintln(w, "Medians are taken per benchmark over the `-count` runs; custom metrics (p99-ms, overhead-ms, peak-MB) are")
	fmt.Fprintln(w, "reported by the benchmarks themselves.")
	fmt.Fprintf(w, "\n```\n%s\n```\n", strings.Join(goLines, "\n"))
	if *notes != "" {
		n, err := os.ReadFile(*notes)
		check(err)
		fmt.Fprintf(w, "\n%s", n)
	}
}

// readDriver reads a bench/lspbench output file (nil when path is "") and,
// when f is not nil, puts its figures in f with prefix before their names.
func readDriver(path, prefix string, f figures) []byte {
	if path == "" {
		return nil
	}
	out, err := os.ReadFile(path)
	check(err)
	if f != nil {
		m := figures{}
		parseDriver(string(out), m)
		for k, v := range m {
			f[prefix+k] = v
		}
	}
	return out
}

func cpu() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	model := "unknown CPU"
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
			break
		}
	}
	return fmt.Sprintf("%d cores (%s)", runtime.NumCPU(), model)
}

func memory() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown memory"
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/report:", err)
		os.Exit(1)
	}
}
