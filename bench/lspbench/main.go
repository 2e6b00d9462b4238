// Command lspbench measures any LSP server over stdio: spawn → initialize
// reply; didOpen of a 200 KB file, 1,000 single-character incremental edits
// and a request round trip; peak resident memory of the process tree; and
// shutdown → exit. It reports the median and the range over several runs.
//
//	go run ./bench/lspbench -runs 10 -- ctxls serve
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type conn struct {
	w       io.Writer
	mu      sync.Mutex
	next    int
	waiting map[int]chan json.RawMessage
}

func (c *conn) write(msg map[string]any) {
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (c *conn) call(method string, params any) chan json.RawMessage {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan json.RawMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	c.write(map[string]any{"id": id, "method": method, "params": params})
	return ch
}

func (c *conn) notify(method string, params any) {
	c.write(map[string]any{"method": method, "params": params})
}

// read answers server requests with null and delivers responses.
func (c *conn) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &m)
		if m.Method != "" {
			if len(m.ID) > 0 {
				c.write(map[string]any{"id": m.ID, "result": nil})
			}
			continue
		}
		id, _ := strconv.Atoi(string(m.ID))
		c.mu.Lock()
		ch := c.waiting[id]
		delete(c.waiting, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- body
		}
	}
}

type sample struct {
	start, edits, shutdown time.Duration
	peakKB                 int
}

// treeHWM sums the peak resident set (VmHWM) of pid and its descendants.
func treeHWM(pid int) int {
	total := 0
	var walk func(int)
	walk = func(p int) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
					kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
					total += kb
				}
			}
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				c, _ := strconv.Atoi(f)
				walk(c)
			}
		}
	}
	walk(pid)
	return total
}

func wait(ch chan json.RawMessage, what string) {
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		fmt.Fprintf(os.Stderr, "lspbench: no answer to %s within 60s\n", what)
		os.Exit(1)
	}
}

func run(argv []string, initOpts json.RawMessage, dir string) sample {
	var s sample
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "lspbench:", err)
		os.Exit(1)
	}
	c := &conn{w: stdin, waiting: map[int]chan json.RawMessage{}}
	go c.read(stdout)
	var opts any = nil
	if len(initOpts) > 0 {
		opts = initOpts
	}
	wait(c.call("initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": "file://" + dir,
		"capabilities":          map[string]any{"general": map[string]any{"positionEncodings": []string{"utf-16"}}},
		"initializationOptions": opts,
		"workspaceFolders":      []any{map[string]any{"uri": "file://" + dir, "name": "bench"}},
	}), "initialize")
	s.start = time.Since(t0)
	c.notify("initialized", map[string]any{})

	line := strings.Repeat("abcdefghij", 7) + "\n"
	text := strings.Repeat(line, 200<<10/len(line))
	uri := "file://" + filepath.Join(dir, "big.txt")
	t1 := time.Now()
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": 1, "text": text}})
	mid := strings.Count(text, "\n") / 2
	for i := range 1000 {
		pos := map[string]any{"line": mid, "character": 10 + i%40}
		c.notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": "x"}},
		})
	}
	wait(c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": mid, "character": 3}}), "hover")
	s.edits = time.Since(t1)
	s.peakKB = treeHWM(cmd.Process.Pid)

	t2 := time.Now()
	wait(c.call("shutdown", nil), "shutdown")
	c.notify("exit", nil)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	s.shutdown = time.Since(t2)
	return s
}

func stats[T int | time.Duration](xs []T) (med, lo, hi T) {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[len(ys)/2], ys[0], ys[len(ys)-1]
}

func main() {
	runs := flag.Int("runs", 10, "runs")
	initOpts := flag.String("init-options", "", "initializationOptions JSON")
	asJSON := flag.Bool("json", false, "print JSON")
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: lspbench [-runs N] [-init-options JSON] -- SERVER ARGS...")
		os.Exit(2)
	}
	dir, _ := os.MkdirTemp("", "lspbench-")
	defer os.RemoveAll(dir)
	var starts, edits, shutdowns []time.Duration
	var peaks []int
	for range *runs {
		s := run(argv, json.RawMessage(*initOpts), dir)
		starts, edits, shutdowns, peaks = append(starts, s.start), append(edits, s.edits), append(shutdowns, s.shutdown), append(peaks, s.peakKB)
	}
	sm, sl, sh := stats(starts)
	em, el, eh := stats(edits)
	dm, dl, dh := stats(shutdowns)
	pm, pl, ph := stats(peaks)
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(map[string]any{
			"server": strings.Join(argv, " "), "runs": *runs,
			"startMs":    []float64{ms(sm), ms(sl), ms(sh)},
			"editsMs":    []float64{ms(em), ms(el), ms(eh)},
			"shutdownMs": []float64{ms(dm), ms(dl), ms(dh)},
			"peakMB":     []float64{float64(pm) / 1024, float64(pl) / 1024, float64(ph) / 1024},
		})
		return
	}
	fmt.Printf("server: %s (%d runs; median [min–max])\n", strings.Join(argv, " "), *runs)
	fmt.Printf("spawn → initialize reply:           %7.1f ms [%.1f–%.1f]\n", ms(sm), ms(sl), ms(sh))
	fmt.Printf("200 KB open + 1,000 edits + request: %7.1f ms [%.1f–%.1f]\n", ms(em), ms(el), ms(eh))
	fmt.Printf("peak resident memory (tree):        %7.1f MB [%.1f–%.1f]\n", float64(pm)/1024, float64(pl)/1024, float64(ph)/1024)
	fmt.Printf("shutdown → exit:                    %7.1f ms [%.1f–%.1f]\n", ms(dm), ms(dl), ms(dh))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
