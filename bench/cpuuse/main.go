// Command cpuuse runs a command and says where the machine's CPU went while
// it ran: the whole machine's busy CPU-seconds (/proc/stat), and the
// CPU-seconds of every process seen meanwhile, summed by program, by the
// test whose temporary folder a process ran in (go test names them
// /tmp/TestName<digits>), and by working directory. Processes are read from
// /proc every -every; one that starts and ends between two reads is missed,
// and a process's CPU is its last reading. The report goes to stderr (the
// command's own output passes through):
//
//	go run ./bench/cpuuse -- test/run
//
// It measures what `time` cannot: the CPU of processes no one waits for
// (Chromium's renderers and GPU process, PostgreSQL's servers), and how
// full the machine was (busy CPU-seconds over the wall time and cores).
// Linux only.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTick = 100

// proc is one process seen (a pid and its start time, so a reused pid is another).
type proc struct {
	cpu      float64 // user+system seconds, as last read
	base     float64 // what it had used before the command started (a process already running then)
	program  string  // comm, with Chromium's and Node's process type
	test     string  // the test whose temporary folder it ran in, if any
	cwd, cmd string
}

func main() {
	every := flag.Duration("every", 400*time.Millisecond, "how often /proc is read")
	top := flag.Int("top", 25, "rows per table")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: cpuuse [-every D] [-top N] -- command [args...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	busy0, err := machineBusy()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuuse:", err)
		os.Exit(2)
	}
	seen := map[string]*proc{}
	scan(seen, true)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cpuuse:", err)
		os.Exit(2)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(*every)
	var runErr error
loop:
	for {
		scan(seen, false)
		select {
		case runErr = <-done:
			break loop
		case <-tick.C:
		}
	}
	wall := time.Since(start).Seconds()
	busy1, _ := machineBusy()
	report(seen, wall, busy1-busy0, *top)
	if runErr != nil {
		if ee, ok := runErr.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Exit(1)
	}
}

// machineBusy is the whole machine's non-idle CPU-seconds since boot.
func machineBusy() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	var busy float64
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy / clockTick, nil
}

var (
	testDir  = regexp.MustCompile(`/tmp/(Test[A-Za-z0-9_]+?)(\d{6,}|/)`)
	procType = regexp.MustCompile(`--type=([a-z-]+)`)
)

// scan reads every process's CPU time, noting the new ones (before: as
// running before the command, whose CPU so far is not counted).
func scan(seen map[string]*proc, before bool) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(string(stat[end+2:]))
		if len(f) < 20 {
			continue
		}
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		cpu := (utime + stime) / clockTick
		key := pid + "/" + f[19]
		if p := seen[key]; p != nil {
			p.cpu = max(p.cpu, cpu)
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		cmd := strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		cwd, _ := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		p := &proc{cpu: cpu, program: string(stat[open+1 : end]), cwd: cwd, cmd: cmd}
		if m := procType.FindStringSubmatch(cmd); m != nil {
			p.program += " " + m[1]
		}
		if m := testDir.FindStringSubmatch(cmd + " " + cwd); m != nil {
			p.test = m[1]
		}
		if before {
			p.base = cpu
		}
		seen[key] = p
	}
}

func report(seen map[string]*proc, wall, busy float64, top int) {
	var sum float64
	programs, tests, dirs := map[string]float64{}, map[string]float64{}, map[string]float64{}
	root, _ := os.Getwd()
	for _, p := range seen {
		cpu := p.cpu - p.base
		if cpu <= 0 {
			continue
		}
		sum += cpu
		programs[p.program] += cpu
		if p.test != "" {
			tests[p.test] += cpu
		}
		dir := p.cwd
		if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
			dir = rel
		}
		dirs[dir] += cpu
	}
	w := os.Stderr
	fmt.Fprintf(w, "\n== cpuuse: %.1f s wall; the machine busy %.0f CPU-s of %.0f (%d cores, %.0f%%); %.0f CPU-s of the processes seen\n",
		wall, busy, wall*float64(runtime.NumCPU()), runtime.NumCPU(), 100*busy/(wall*float64(runtime.NumCPU())), sum)
	table(w, "by program (comm; Chromium's and Node's process type)", programs, top)
	table(w, "by test (the processes that ran in its temporary folder)", tests, top)
	table(w, "by working directory", dirs, top)
}

func table(w *os.File, title string, m map[string]float64, top int) {
	type row struct {
		k string
		v float64
	}
	var rows []row
	for k, v := range m {
		rows = append(rows, row{k, v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].v > rows[j].v })
	fmt.Fprintf(w, "-- %s\n", title)
	for i, r := range rows {
		if i == top {
			break
		}
		fmt.Fprintf(w, "%8.1f  %s\n", r.v, r.k)
	}
}
