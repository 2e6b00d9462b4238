// Command lspbench measures any LSP server over stdio: spawn → initialize
// reply; didOpen of a 200 KB file, 1,000 single-character incremental edits
// and a request round trip; peak resident memory of the process tree; and
// shutdown → exit; and the CPU time (user+sys) the tree used from spawn to
// exit, which load from elsewhere on the machine disturbs less than the
// wall-clock figures. It reports the median and the range over several runs.
//
//	go run ./bench/lspbench -runs 10 -- ctxls serve
//
// The same driver runs peers (bench/peers): -init-options carries what a
// server needs to start (Copilot's editorInfo), -language-id and -ext set the
// opened document, and -request picks the round-trip request. The reply is
// reported as it came: a JSON-RPC error reply still ends the round trip, and
// the output says so.
//
// With -first-request METHOD (and -first-request-params), a run instead
// sends that request the moment initialized is sent and times its answer,
// from its send and from spawn, then shuts down: what a client that asks
// for something at once waits (a server may still be starting up behind
// its initialize answer). Idle memory and the edits are not measured then.
//
// Each run starts the server in a process group of its own, with lspbench as
// child subreaper, so the whole tree (children that daemonize included) is
// killed and reaped before the next run. Every wait has a deadline
// (-timeout); a server that dies or never answers stops lspbench with a
// message naming the step and the tail of the server's stderr.
//
// Linux only: memory comes from /proc (VmHWM summed over the process tree).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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
	"sync/atomic"
	"syscall"
	"time"
)

// config is what the flags say.
type config struct {
	argv       []string
	initOpts   json.RawMessage // initializationOptions; nil sends null
	settings   json.RawMessage // workspace/didChangeConfiguration settings; nil sends none
	languageID string
	ext        string
	method     string
	params     string // request params with ${uri}, ${line} and ${character} placeholders; "" = a text document position
	timeout    time.Duration
	trace      bool
	// first, when set, is a request sent right after initialized (params
	// firstParams); a run then ends after its reply (no idle memory, no
	// edits): what a client that asks for something at once waits.
	first       string
	firstParams json.RawMessage
}

// reply is one message from the server that answers a call of ours.
type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// summary says what kind of answer a reply was, for the report.
func (r reply) summary() string {
	if r.Error != nil {
		return fmt.Sprintf("error %d (%s)", r.Error.Code, truncate(r.Error.Message, 60))
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return "result null"
	}
	return fmt.Sprintf("result, %d bytes", len(r.Result))
}

// conn is the client side of one server connection.
type conn struct {
	cfg    *config
	folder map[string]any
	t0     time.Time

	// wmu serializes frames on the server's stdin.
	wmu sync.Mutex
	w   io.Writer

	// mu guards next and waiting.
	mu      sync.Mutex
	next    int
	waiting map[int]chan reply

	dead chan struct{} // closed when the server's stdout ends
}

func (c *conn) write(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return err
}

func (c *conn) call(method string, params any) (chan reply, error) {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	return ch, c.write(map[string]any{"id": id, "method": method, "params": params})
}

func (c *conn) notify(method string, params any) error {
	return c.write(map[string]any{"method": method, "params": params})
}

// read delivers replies to our calls, answers the server's requests and
// drops its notifications. It closes c.dead when stdout ends.
func (c *conn) read(r io.Reader) {
	defer close(c.dead)
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
		if n < 0 {
			fmt.Fprintln(os.Stderr, "lspbench: frame without Content-Length from the server")
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			reply
		}
		if err := json.Unmarshal(body, &m); err != nil {
			fmt.Fprintf(os.Stderr, "lspbench: unreadable message from the server: %v\n", err)
			continue
		}
		if c.cfg.trace {
			fmt.Fprintf(os.Stderr, "lspbench: %8.1f ms ← %s\n", ms(time.Since(c.t0)), truncate(string(body), 300))
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			c.answer(m.ID, m.Method, m.Params)
		case m.Method != "":
			// A notification: logs, status, diagnostics. Nothing to do.
		default:
			id, _ := strconv.Atoi(string(m.ID))
			c.mu.Lock()
			ch := c.waiting[id]
			delete(c.waiting, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m.reply
			}
		}
	}
}

// answer replies to a request from the server the way a plain editor
// would: no configuration, no UI, nothing applied.
func (c *conn) answer(id json.RawMessage, method string, params json.RawMessage) {
	var result any
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		json.Unmarshal(params, &p)
		items := make([]any, len(p.Items))
		for i, it := range p.Items {
			items[i] = c.setting(it.Section)
		}
		result = items
	case "workspace/workspaceFolders":
		result = []any{c.folder}
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "workspace/semanticTokens/refresh", "workspace/inlayHint/refresh",
		"workspace/codeLens/refresh", "workspace/diagnostic/refresh":
		result = nil
	case "window/showDocument":
		result = map[string]any{"success": false}
	case "workspace/applyEdit":
		result = map[string]any{"applied": false}
	default:
		c.write(map[string]any{"id": id, "error": map[string]any{"code": -32601, "message": "lspbench does not handle " + method}})
		return
	}
	c.write(map[string]any{"id": id, "result": result})
}

// setting looks a dotted section up in the -settings JSON; nil when it is
// absent, as from an editor with no such configuration.
func (c *conn) setting(section string) any {
	if c.cfg.settings == nil {
		return nil
	}
	var v any
	json.Unmarshal(c.cfg.settings, &v)
	if section == "" {
		return v
	}
	for _, k := range strings.Split(section, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

type sample struct {
	start, edits, shutdown time.Duration
	first, firstSpawn      time.Duration // -first-request: from its send, and from spawn
	cpu                    time.Duration // user+sys of the whole tree, spawn to exit
	peakKB                 int
	idleKB                 int    // resident set of the tree a moment after initialized
	idleAnonKB             int    // of it, anonymous memory (RssAnon): not pages of the binary or of files
	reply                  string // what the round-trip request got
	stragglers             int    // processes of the tree still running after the server exited
}

// proc is one running server and everything it started.
type proc struct {
	cmd    *exec.Cmd
	stderr *tail
	done   chan struct{} // closed when cmd.Wait returns
}

// kill ends the whole tree: the process group, then any descendant that
// left it (reparented to us as subreaper), and reaps them all.
// It returns the CPU time the reaped orphans used.
func (p *proc) kill() time.Duration {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	return reapOrphans(p.cmd.Process.Pid)
}

// reapOrphans kills and reaps our children other than skip: processes of a
// server tree that outlived their parent and were reparented to lspbench.
// It returns the CPU time (user+sys) they and their reaped children used.
func reapOrphans(skip int) time.Duration {
	var cpu time.Duration
	for range 10 {
		kids := children(os.Getpid())
		kids = slices.DeleteFunc(kids, func(k int) bool { return k == skip })
		if len(kids) == 0 {
			break
		}
		for _, k := range kids {
			syscall.Kill(k, syscall.SIGKILL)
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			if _, err := syscall.Wait4(k, &ws, 0, &ru); err == nil {
				cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
		}
	}
	return cpu
}

// children lists the direct children of pid.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// idleSettle is how long after initialized the idle memory is read: long
// enough for what a daemon does once it has started (its store's open,
// the clean-up after it, the first looks of its live updates) to be over,
// so the figure is what it holds while it waits (it was 200 ms).
const idleSettle = 2 * time.Second

// treeHWM sums the peak resident set (VmHWM) of pid and its descendants.
func treeHWM(pid int) int { return treeStatus(pid, "VmHWM:") }

// treeRSS sums the resident set (VmRSS) of pid and its descendants now.
func treeRSS(pid int) int { return treeStatus(pid, "VmRSS:") }

// treeStatus sums a kB field of /proc/PID/status over pid and its
// descendants.
func treeStatus(pid int, field string) int {
	total := 0
	var walk func(int)
	walk = func(p int) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p)); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, field); ok {
					kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
					total += kb
				}
			}
		}
		for _, c := range children(p) {
			walk(c)
		}
	}
	walk(pid)
	return total
}

// tail keeps the last few KB written to it (the server's stderr).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = slices.Clone(t.buf[len(t.buf)-4096:])
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// failure is a run that could not finish, with what the server said.
type failure struct {
	step, why, stderr string
}

func (f *failure) Error() string {
	msg := fmt.Sprintf("%s: %s", f.step, f.why)
	if f.stderr != "" {
		msg += "\nlast server stderr:\n" + f.stderr
	}
	return msg
}

// run measures one server start to exit.
func run(cfg *config, dir string) (s sample, err error) {
	cmd := exec.Command(cfg.argv[0], cfg.argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return s, err
	}
	p := &proc{cmd: cmd, stderr: &tail{}, done: make(chan struct{})}
	// Stdout and stderr are pipes of our own (*os.File), so that cmd.Wait
	// returns when the server exits (with any other writer it would also
	// wait for every process that inherited one, a telemetry child say),
	// and so that a reply written just before an exit is still read.
	or, ow, err := os.Pipe()
	if err != nil {
		return s, err
	}
	defer or.Close()
	er, ew, err := os.Pipe()
	if err != nil {
		return s, err
	}
	cmd.Stdout, cmd.Stderr = ow, ew
	go func() { io.Copy(p.stderr, er); er.Close() }()
	t0 := time.Now()
	err = cmd.Start()
	ow.Close()
	ew.Close()
	if err != nil {
		return s, err
	}
	var exitErr error
	go func() { exitErr = cmd.Wait(); close(p.done) }()
	defer func() { s.cpu += p.kill() }()

	folder := map[string]any{"uri": "file://" + dir, "name": filepath.Base(dir)}
	c := &conn{cfg: cfg, folder: folder, t0: t0, w: stdin, waiting: map[int]chan reply{}, dead: make(chan struct{})}
	go c.read(or)

	// fail describes why step stopped: the server died, or it hung and
	// the deadline killed it.
	fail := func(step, why string) error {
		select {
		case <-p.done:
			why = fmt.Sprintf("the server exited (%v)", exitErr)
		case <-time.After(100 * time.Millisecond):
		}
		return &failure{step: step, why: why, stderr: p.stderr.String()}
	}
	// send runs a sequence of writes under a deadline: a server that stops
	// reading its stdin would otherwise block us forever.
	send := func(step string, f func() error) error {
		var expired atomic.Bool
		timer := time.AfterFunc(cfg.timeout, func() {
			expired.Store(true)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		})
		err := f()
		timer.Stop()
		switch {
		case expired.Load():
			return &failure{step: step, why: fmt.Sprintf("the server did not read its input within %s (killed by lspbench)", cfg.timeout), stderr: p.stderr.String()}
		case err != nil:
			return fail(step, fmt.Sprintf("could not write to the server: %v", err))
		}
		return nil
	}
	await := func(step string, ch chan reply) (reply, error) {
		select {
		case r := <-ch:
			return r, nil
		case <-c.dead:
			// The reply may have come just before stdout closed.
			select {
			case r := <-ch:
				return r, nil
			default:
			}
			return reply{}, fail(step, "the server closed its stdout before answering")
		case <-p.done:
			// The server exited; give the reader a moment for a reply
			// still in the pipe.
			select {
			case r := <-ch:
				return r, nil
			case <-time.After(200 * time.Millisecond):
			}
			return reply{}, fail(step, "no answer")
		case <-time.After(cfg.timeout):
			return reply{}, fail(step, fmt.Sprintf("no answer within %s", cfg.timeout))
		}
	}

	// shutdown ends the run: shutdown, exit, and the process gone.
	shutdown := func() error {
		t2 := time.Now()
		var shutCh chan reply
		if err := send("shutdown", func() (err error) { shutCh, err = c.call("shutdown", nil); return err }); err != nil {
			return err
		}
		if _, err := await("shutdown", shutCh); err != nil {
			return err
		}
		c.notify("exit", nil)
		stdin.Close()
		select {
		case <-p.done:
		case <-time.After(cfg.timeout):
			return fail("exit", fmt.Sprintf("the server did not exit within %s of the exit notification", cfg.timeout))
		}
		s.shutdown = time.Since(t2)
		// Whatever of the tree still runs was started by the server and not
		// ended with it; p.kill reaps it.
		s.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		s.stragglers = len(children(os.Getpid()))
		return nil
	}

	var initCh chan reply
	if err := send("initialize", func() (err error) {
		initCh, err = c.call("initialize", map[string]any{
			"processId":  os.Getpid(),
			"clientInfo": map[string]any{"name": "lspbench", "version": "1"},
			"rootUri":    "file://" + dir,
			"capabilities": map[string]any{
				"general":      map[string]any{"positionEncodings": []string{"utf-16"}},
				"workspace":    map[string]any{"workspaceFolders": true, "configuration": true},
				"textDocument": map[string]any{"synchronization": map[string]any{"dynamicRegistration": false}},
			},
			"initializationOptions": cfg.initOpts,
			"workspaceFolders":      []any{folder},
		})
		return err
	}); err != nil {
		return s, err
	}
	r, err := await("initialize", initCh)
	if err != nil {
		return s, err
	}
	if r.Error != nil {
		return s, &failure{step: "initialize", why: r.summary(), stderr: p.stderr.String()}
	}
	s.start = time.Since(t0)
	if err := send("initialized", func() error {
		if err := c.notify("initialized", map[string]any{}); err != nil {
			return err
		}
		if cfg.settings != nil {
			return c.notify("workspace/didChangeConfiguration", map[string]any{"settings": cfg.settings})
		}
		return nil
	}); err != nil {
		return s, err
	}
	if cfg.first != "" {
		var firstCh chan reply
		tf := time.Now()
		if err := send(cfg.first, func() (err error) { firstCh, err = c.call(cfg.first, cfg.firstParams); return err }); err != nil {
			return s, err
		}
		r, err := await(cfg.first, firstCh)
		if err != nil {
			return s, err
		}
		s.first, s.firstSpawn, s.reply = time.Since(tf), time.Since(t0), r.summary()
		err = shutdown()
		return s, err
	}
	// Idle memory: what the server keeps resident once started, before any
	// document (what an editor window costs while nobody chats).
	time.Sleep(idleSettle)
	s.idleKB = treeRSS(cmd.Process.Pid)
	s.idleAnonKB = treeStatus(cmd.Process.Pid, "RssAnon:")

	line := strings.Repeat("abcdefghij", 7) + "\n"
	text := strings.Repeat(line, 200<<10/len(line))
	uri := "file://" + filepath.Join(dir, "big"+cfg.ext)
	mid := strings.Count(text, "\n") / 2
	params := any(map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": mid, "character": 3}})
	if cfg.params != "" {
		params = json.RawMessage(strings.NewReplacer("${uri}", uri, "${line}", strconv.Itoa(mid), "${character}", "3").Replace(cfg.params))
	}
	var reqCh chan reply
	t1 := time.Now()
	if err := send("didOpen and 1,000 didChange", func() error {
		if err := c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": cfg.languageID, "version": 1, "text": text}}); err != nil {
			return err
		}
		for i := range 1000 {
			pos := map[string]any{"line": mid, "character": 10 + i%40}
			if err := c.notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": i + 2},
				"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": "x"}},
			}); err != nil {
				return err
			}
		}
		var err error
		reqCh, err = c.call(cfg.method, params)
		return err
	}); err != nil {
		return s, err
	}
	r, err = await(cfg.method, reqCh)
	if err != nil {
		return s, err
	}
	s.edits = time.Since(t1)
	s.reply = r.summary()
	s.peakKB = treeHWM(cmd.Process.Pid)
	err = shutdown()
	return s, err
}

// setSubreaper makes lspbench the parent of any orphan of the server tree,
// so that kill can find and reap it.
func setSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

func stats[T int | time.Duration | float64](xs []T) (med, lo, hi T) {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys[len(ys)/2], ys[0], ys[len(ys)-1]
}

// jsonFlag is a flag that must hold valid JSON.
type jsonFlag struct{ v json.RawMessage }

func (j *jsonFlag) String() string { return string(j.v) }
func (j *jsonFlag) Set(s string) error {
	if !json.Valid([]byte(s)) {
		return errors.New("not valid JSON")
	}
	j.v = json.RawMessage(s)
	return nil
}

func main() {
	var cfg config
	var initOpts, settings jsonFlag
	runs := flag.Int("runs", 10, "runs")
	flag.Var(&initOpts, "init-options", "initializationOptions `JSON` (default null)")
	flag.Var(&settings, "settings", "client configuration (`JSON`): sent in workspace/didChangeConfiguration after initialized and used to answer workspace/configuration")
	flag.StringVar(&cfg.languageID, "language-id", "plaintext", "languageId of the opened document")
	flag.StringVar(&cfg.ext, "ext", ".txt", "file name extension of the opened document")
	flag.StringVar(&cfg.method, "request", "textDocument/hover", "`method` of the round-trip request sent after the edits")
	flag.StringVar(&cfg.params, "request-params", "", "params `JSON` of the request; ${uri}, ${line} and ${character} are replaced (default: a position in the document)")
	flag.DurationVar(&cfg.timeout, "timeout", 60*time.Second, "deadline for each step (initialize, the edits, the request, shutdown, exit)")
	flag.BoolVar(&cfg.trace, "trace", false, "print every message from the server to stderr")
	var firstParams jsonFlag
	flag.StringVar(&cfg.first, "first-request", "", "a request (`method`) sent right after initialized and timed; a run then ends after its reply (no idle memory, no edits)")
	flag.Var(&firstParams, "first-request-params", "params `JSON` of -first-request (default null)")
	asJSON := flag.Bool("json", false, "print one JSON object: median, min and max of each measure ([3]float64) and every run's figures (samples)")
	merge := flag.String("merge", "", "print the summary of the runs in `FILE`, the -json outputs of several lspbench runs one a line (runs interleaved with another server's), and exit")
	flag.Parse()
	if *merge != "" {
		if err := printMerged(*merge); err != nil {
			fmt.Fprintln(os.Stderr, "lspbench:", err)
			os.Exit(1)
		}
		return
	}
	cfg.argv = flag.Args()
	cfg.initOpts, cfg.settings, cfg.firstParams = initOpts.v, settings.v, firstParams.v
	if len(cfg.argv) == 0 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: lspbench [-runs N] [-init-options JSON] [-language-id ID -ext .EXT] [-request METHOD] -- SERVER ARGS...")
		os.Exit(2)
	}
	if cfg.params != "" && !json.Valid([]byte(strings.NewReplacer("${line}", "0", "${character}", "0").Replace(cfg.params))) {
		fmt.Fprintln(os.Stderr, "lspbench: -request-params is not valid JSON")
		os.Exit(2)
	}
	setSubreaper()
	dir, err := os.MkdirTemp("", "lspbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "lspbench:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	var replies []string
	var samples []map[string]float64 // per run
	stragglers := 0
	for i := range *runs {
		s, err := run(&cfg, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "lspbench: %s: run %d: %v\n", strings.Join(cfg.argv, " "), i+1, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		sample := map[string]float64{"startMs": ms(s.start), "shutdownMs": ms(s.shutdown), "cpuMs": ms(s.cpu)}
		if cfg.first != "" {
			sample["firstMs"], sample["firstSpawnMs"] = ms(s.first), ms(s.firstSpawn)
		} else {
			sample["editsMs"], sample["peakMB"] = ms(s.edits), float64(s.peakKB)/1024
			sample["idleMB"], sample["idleAnonMB"] = float64(s.idleKB)/1024, float64(s.idleAnonKB)/1024
		}
		samples = append(samples, sample)
		if !slices.Contains(replies, s.reply) {
			replies = append(replies, s.reply)
		}
		stragglers += s.stragglers
	}
	if stragglers > 0 {
		fmt.Fprintf(os.Stderr, "lspbench: %s: over %d runs, %d processes started by the server still ran after it exited (killed by lspbench)\n", filepath.Base(cfg.argv[0]), *runs, stragglers)
	}
	method := cfg.method
	if cfg.first != "" {
		method = cfg.first
	}
	f := summarize(samples)
	if *asJSON {
		out := map[string]any{
			"server": strings.Join(cfg.argv, " "), "runs": *runs,
			"request": method, "reply": strings.Join(replies, "; "),
			"samples": samples,
		}
		for k, v := range f {
			out[k] = v[:]
		}
		var b bytes.Buffer
		json.NewEncoder(&b).Encode(out)
		os.Stdout.Write(b.Bytes())
		return
	}
	printSummary(strings.Join(cfg.argv, " "), *runs, method, strings.Join(replies, "; "), f)
}

// summarize gives the median, min and max of each measure of the samples.
func summarize(samples []map[string]float64) map[string][3]float64 {
	cols := map[string][]float64{}
	for _, s := range samples {
		for k, v := range s {
			cols[k] = append(cols[k], v)
		}
	}
	f := map[string][3]float64{}
	for k, v := range cols {
		m, lo, hi := stats(v)
		f[k] = [3]float64{m, lo, hi}
	}
	return f
}

// printSummary prints the figures (median, min, max of each measure) as
// bench/report reads them.
func printSummary(server string, runs int, method, replies string, f map[string][3]float64) {
	fmt.Printf("server: %s (%d runs; median [min–max])\n", server, runs)
	for _, l := range []struct{ label, key, unit string }{
		{"spawn → initialize reply:           ", "startMs", "ms"},
		{"first request, sent after initialized:", "firstMs", "ms"},
		{"spawn → first request's reply:      ", "firstSpawnMs", "ms"},
		{"200 KB open + 1,000 edits + request:", "editsMs", "ms"},
		{"idle resident memory after initialize:", "idleMB", "MB"},
		{"  of it anonymous (not the binary's pages):", "idleAnonMB", "MB"},
		{"peak resident memory (tree):        ", "peakMB", "MB"},
		{"shutdown → exit:                    ", "shutdownMs", "ms"},
		{"CPU time, spawn to exit (tree):     ", "cpuMs", "ms"},
	} {
		v, ok := f[l.key]
		if !ok {
			continue
		}
		fmt.Printf("%s %7.1f %s [%.1f–%.1f]\n", l.label, v[0], l.unit, v[1], v[2])
	}
	fmt.Printf("request %s answered with: %s\n", method, replies)
}

// printMerged prints the summary of the -json outputs in file, one a line.
func printMerged(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var server, method string
	var replies []string
	var samples []map[string]float64
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var r struct {
			Server, Request, Reply string
			Samples                []map[string]float64
		}
		if err := dec.Decode(&r); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		server, method = r.Server, r.Request
		if !slices.Contains(replies, r.Reply) {
			replies = append(replies, r.Reply)
		}
		samples = append(samples, r.Samples...)
	}
	if len(samples) == 0 {
		return fmt.Errorf("%s: no runs", file)
	}
	printSummary(server, len(samples), method, strings.Join(replies, "; "), summarize(samples))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
