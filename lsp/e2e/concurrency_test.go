package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

var (
	daemonWrites = flag.Int("daemon-writes", 1000, "writes per daemon in TestFourDaemonsOneDataDir")
	daemonSeed   = flag.Uint64("daemon-seed", 0, "random seed for TestFourDaemonsOneDataDir (0: from the clock)")
)

// TestFourDaemonsOneDataDir: four daemons (the built binary over real stdio)
// share one data directory. Each makes -daemon-writes mixed writes (1,000
// by default, the size issue 6 names: about 65 s under -race on two cores;
// 200 with -short) from three concurrent workers: session
// create/delete, chat turns (plain, and with a model tool call that sets
// context), context merge/replace/remove, renames (which move the session
// folder), file add/remove, exports, with reads in between. Some sessions
// are written by every worker of every daemon at once, so one daemon renames
// a session while another adds a file to it or appends a message. No request
// may fail; afterwards a fresh daemon checks that the state is exactly the
// sum of the writes: every message, context item and file, the last title,
// one folder per session on disk (the one the database names), a current
// history.md, no stray files, and no "database is locked" in any log.
func TestFourDaemonsOneDataDir(t *testing.T) {
	parallel(t, loadTests)
	writes := *daemonWrites
	if testing.Short() && writes > 200 {
		writes = 200
	}
	dataDir := t.TempDir()
	runFourDaemons(t, fourDaemons{dataDirs: []string{dataDir, dataDir, dataDir, dataDir}, verifyDir: dataDir, writes: writes})
}

// fourDaemonsSummary is what the fake model answers when a daemon
// compacts a shared session that grew long.
const fourDaemonsSummary = "## Goal\nKeep every write."

// fourDaemons is how TestFourDaemons… runs its daemons.
type fourDaemons struct {
	dataDirs  []string // each daemon's --data-dir
	verifyDir string   // the checking daemon's
	flags     []string // more flags for every daemon (the store)
	writes    int      // per daemon
	// mirrors: the data directories hold mirrors of a database (the
	// PostgreSQL store), not the sessions themselves.
	mirrors bool
}

// runFourDaemons runs four daemons making cfg.writes writes each, then
// checks the sum of their writes through a fresh daemon.
func runFourDaemons(t *testing.T, cfg fourDaemons) {
	const (
		daemons = 4
		workers = 3 // per daemon
		shared  = 4 // sessions every worker writes to
	)
	seed := *daemonSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("%d daemons x %d writes, seed %d (-daemon-seed to repeat)", daemons, cfg.writes, seed)
	_, rootURI := workspace(t)

	w := &world{t: t, sessions: map[string]*expected{}}
	var ds []*daemon
	for d := range daemons {
		// A shared session grows long enough to be compacted: its summary
		// request must not take a reply queued for a turn.
		fake := openaitest.New(t, openaitest.WithSummaries(openaitest.Reply{Chunks: []string{fourDaemonsSummary}}))
		srv := lsptest.Binary(t, []string{backend.StoreEnv + "="}, append([]string{"serve", "--data-dir", cfg.dataDirs[d], "--log-level", "debug"}, cfg.flags...)...)
		srv.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
			"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000},
		}})
		ds = append(ds, &daemon{n: d, srv: srv, fake: fake, dataDir: cfg.dataDirs[d]})
	}
	var sharedIDs []string
	for i := range shared {
		sharedIDs = append(sharedIDs, w.create(ds[i%daemons], fmt.Sprintf("shared %d", i), "").id)
	}

	start := time.Now()
	var wg sync.WaitGroup
	for _, d := range ds {
		for k := range workers {
			// Split the daemon's writes between its workers.
			n := cfg.writes / workers
			if k < cfg.writes%workers {
				n++
			}
			wk := &worker{w: w, d: d, name: fmt.Sprintf("d%dw%d", d.n, k), shared: sharedIDs,
				rng: rand.New(rand.NewPCG(seed, uint64(d.n*workers+k)))}
			wg.Go(func() { wk.run(n) })
		}
	}
	wg.Wait()
	t.Logf("%d writes and %d reads in %v (%d turns retried: busy on another daemon); request times:%s",
		w.writes.Load(), w.reads.Load(), time.Since(start).Round(time.Millisecond), w.busyRetries.Load(), w.latencies())
	for _, d := range ds {
		d.srv.Shutdown()
		if code := d.srv.Exit(); code != 0 {
			t.Errorf("daemon %d exited with %d", d.n, code)
		}
	}
	for _, d := range ds {
		checkLog(t, fmt.Sprintf("daemon %d", d.n), d.srv)
	}
	if t.Failed() {
		return
	}
	w.verify(cfg, ds, rootURI)
}

// daemon is one ctxls process with its own fake provider.
type daemon struct {
	n       int
	srv     *lsptest.Server
	fake    *openaitest.Server
	dataDir string
	// chat serialises this daemon's chat turns, so each turn gets the
	// replies it enqueued (the fake serves its queue in order).
	chat sync.Mutex
}

// expected is what one session must hold at the end. Context sets and file
// names belong to one worker each, so their final state does not depend on
// how the workers interleave; titles do, and are ordered by the updatedAt
// each rename reported.
type expected struct {
	mu       sync.Mutex
	id       string
	owner    string // the worker that may delete it; "" for shared sessions
	deleted  bool
	title    string
	titleAt  time.Time
	sets     map[string][]string
	files    map[string]string // name → content
	messages []string          // "role: content", any order
	turns    []string          // words unique to each turn, for search
	exported map[int]bool      // the daemons that exported it
	deleter  int               // the daemon that deleted it
}

// world is the sum of the writes.
type world struct {
	t        testing.TB
	mu       sync.Mutex
	sessions map[string]*expected
	latency  map[string][]time.Duration // by kind of request
	writes   atomic.Int64
	reads    atomic.Int64
	// busyRetries counts turns refused because a turn of the session ran
	// on another daemon (the PostgreSQL store's turn lock), then retried.
	busyRetries atomic.Int64
}

func (w *world) session(id string) *expected {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessions[id]
}

// create makes a session through d and records it.
func (w *world) create(d *daemon, title, owner string) *expected {
	var res api.SessionResult
	if !w.call(d, "session.new", api.SessionNew, map[string]any{"title": title}, &res) {
		return nil
	}
	e := &expected{id: res.Session.ID, owner: owner, title: res.Session.Title, titleAt: res.Session.UpdatedAt,
		sets: map[string][]string{}, files: map[string]string{}, exported: map[int]bool{}}
	w.mu.Lock()
	w.sessions[e.id] = e
	w.mu.Unlock()
	return e
}

// call runs a command and fails the test on an error response, calling a
// "database is locked" out by name.
func (w *world) call(d *daemon, what, cmd string, arg, result any) bool {
	start := time.Now()
	err := d.srv.Command(cmd, arg, result)
	w.timing(what, time.Since(start))
	return w.check(d, what, err)
}

// timing records how long a request took, by kind.
func (w *world) timing(what string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latency == nil {
		w.latency = map[string][]time.Duration{}
	}
	w.latency[what] = append(w.latency[what], d)
}

// latencies summarises the request times: count, median, 99th percentile
// and maximum per kind.
func (w *world) latencies() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	kinds := make([]string, 0, len(w.latency))
	for k := range w.latency {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		ds := slices.Clone(w.latency[k])
		slices.Sort(ds)
		fmt.Fprintf(&b, "\n  %-14s n=%-5d p50=%-8v p99=%-8v max=%v", k, len(ds),
			ds[len(ds)/2].Round(time.Millisecond/10), ds[len(ds)*99/100].Round(time.Millisecond/10), ds[len(ds)-1].Round(time.Millisecond/10))
	}
	return b.String()
}

func (w *world) check(d *daemon, what string, err error) bool {
	if err == nil {
		return true
	}
	msg := err.Error()
	if bad := storeContention(msg); bad != "" {
		w.t.Errorf("daemon %d: %s: %q reached the user: %v", d.n, what, bad, err)
	} else {
		w.t.Errorf("daemon %d: %s: %v", d.n, what, err)
	}
	return false
}

// worker makes one share of a daemon's writes.
type worker struct {
	w       *world
	d       *daemon
	name    string
	shared  []string
	private []*expected
	rng     *rand.Rand
	seq     int
}

func (k *worker) next() int { k.seq++; return k.seq }

// pick chooses the session for the next write: a shared one half the time.
func (k *worker) pick() *expected {
	if len(k.private) == 0 || k.rng.IntN(2) == 0 {
		return k.w.session(k.shared[k.rng.IntN(len(k.shared))])
	}
	return k.private[k.rng.IntN(len(k.private))]
}

func (k *worker) run(writes int) {
	for range writes {
		if k.w.t.Failed() {
			return
		}
		k.w.writes.Add(1)
		switch r := k.rng.IntN(100); {
		case r < 5 || len(k.private) == 0:
			k.newSession()
		case r < 7 && len(k.private) > 1:
			k.deleteSession()
		case r < 27:
			k.chat(k.pick(), false)
		case r < 32:
			k.chat(k.pick(), true)
		case r < 55:
			k.setContext(k.pick())
		case r < 70:
			k.rename(k.pick())
		case r < 83:
			k.addFile(k.pick())
		case r < 93:
			k.removeFile(k.pick())
		default:
			k.export(k.pick())
		}
		k.read()
	}
}

func (k *worker) newSession() {
	if e := k.w.create(k.d, fmt.Sprintf("%s private %d", k.name, k.next()), k.name); e != nil {
		k.private = append(k.private, e)
	}
}

func (k *worker) deleteSession() {
	i := k.rng.IntN(len(k.private))
	e := k.private[i]
	k.private = slices.Delete(k.private, i, i+1)
	var res api.DeleteResult
	if k.w.call(k.d, "delete", api.SessionDelete, map[string]any{"sessionId": e.id}, &res) {
		e.mu.Lock()
		e.deleted, e.deleter = true, k.d.n
		e.mu.Unlock()
	}
}

// chat runs a turn whose replies this worker scripts; with tool set, the
// model first calls set_relevant_context on a set of this worker's.
func (k *worker) chat(e *expected, tool bool) {
	n := k.next()
	word := fmt.Sprintf("zq%sx%d", k.name, n) // one search token
	msg := fmt.Sprintf("question %s from %s", word, k.name)
	answer := fmt.Sprintf("answer %d for %s", n, k.name)
	setName, item := "tool-"+k.name, fmt.Sprintf("tool item %s %d", k.name, n)
	k.d.chat.Lock()
	defer k.d.chat.Unlock()
	if tool {
		args, _ := json.Marshal(map[string]any{"setName": setName, "items": []string{item}, "mode": "replace"})
		k.d.fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call-" + word, Name: "set_relevant_context", Arguments: string(args)}}})
	}
	k.d.fake.Enqueue(openaitest.Reply{Chunks: []string{answer[:7], answer[7:]}})
	var res api.ChatResult
	what := "chat"
	if tool {
		what = "chat+tool"
	}
	started := time.Now()
	var err error
	for try := 0; ; try++ {
		err = k.d.srv.Call("ctxls/chat", map[string]any{"sessionId": e.id, "message": msg}, &res)
		// With the PostgreSQL store a turn in a session whose turn runs on
		// another daemon is refused at once (nothing stored): the editor
		// tries again. The SQLite store has no such lock.
		var rpcErr *lsptest.RPCError
		if try < 200 && errors.As(err, &rpcErr) && rpcErr.Code == -32803 && strings.Contains(rpcErr.Message, "another machine") {
			k.w.busyRetries.Add(1)
			time.Sleep(time.Duration(5+k.rng.IntN(20)) * time.Millisecond)
			continue
		}
		break
	}
	k.w.timing(what, time.Since(started))
	if !k.w.check(k.d, what, err) {
		return
	}
	if res.Text != answer || res.FinishReason != "stop" {
		k.w.t.Errorf("%s: chat answered %q (%s), want %q", k.name, res.Text, res.FinishReason, answer)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.messages = append(e.messages, "user: "+msg, "assistant: "+answer)
	if tool {
		// The round that called the tool (no text), the tool's answer.
		e.messages = append(e.messages, "assistant: ", "tool: "+item)
		e.sets[setName] = []string{item}
	}
	e.turns = append(e.turns, word)
}

// setContext merges, replaces or removes items of a set of this worker's,
// keeping every set at three items at most (12 workers x 4 sets stay under
// the 50 items a session may hold).
func (k *worker) setContext(e *expected) {
	setName := "ctx-" + k.name
	e.mu.Lock()
	cur := slices.Clone(e.sets[setName])
	e.mu.Unlock()
	n := k.next()
	var items, want []string
	mode := "replace"
	switch r := k.rng.IntN(3); {
	case r == 0 && len(cur) < 3:
		mode = "merge"
		items = []string{fmt.Sprintf("item %s %d", k.name, n)}
		if len(cur) > 0 && len(cur) < 2 {
			items = append(items, cur[0]) // already there: kept once
		}
		want = append(cur, items[0])
	case r == 1 && len(cur) > 0:
		drop := k.rng.IntN(len(cur))
		items = slices.Delete(slices.Clone(cur), drop, drop+1)
		want = items
	default:
		for j := range 1 + k.rng.IntN(3) {
			items = append(items, fmt.Sprintf("item %s %d.%d", k.name, n, j))
		}
		want = items
	}
	if items == nil {
		items = []string{} // an empty list deletes the set
	}
	var res api.ContextSetResult
	if !k.w.call(k.d, "context.set", api.ContextSet, map[string]any{"sessionId": e.id, "setName": setName, "items": items, "mode": mode}, &res) {
		return
	}
	if !slices.Equal(res.Items, want) && len(res.Items)+len(want) > 0 {
		k.w.t.Errorf("%s: context.set %s %q gave %q, want %q", k.name, mode, items, res.Items, want)
	}
	e.mu.Lock()
	if len(want) == 0 {
		delete(e.sets, setName)
	} else {
		e.sets[setName] = want
	}
	e.mu.Unlock()
}

func (k *worker) rename(e *expected) {
	title := fmt.Sprintf("%s renamed by %s #%d", e.id[:4], k.name, k.next())
	var res api.SessionResult
	if !k.w.call(k.d, "rename", api.SessionRename, map[string]any{"sessionId": e.id, "title": title}, &res) {
		return
	}
	if res.Session.Title != title || !strings.HasPrefix(filepath.Base(res.Session.Folder), res.Session.CreatedAt.Format("2006-01-02T15-04-05")) {
		k.w.t.Errorf("%s: rename to %q answered %q in %s", k.name, title, res.Session.Title, res.Session.Folder)
	}
	e.mu.Lock()
	if res.Session.UpdatedAt.After(e.titleAt) {
		e.title, e.titleAt = res.Session.Title, res.Session.UpdatedAt
	}
	e.mu.Unlock()
}

func (k *worker) addFile(e *expected) {
	name := fmt.Sprintf("%s-%d.txt", k.name, k.next())
	content := fmt.Sprintf("file %s of session %s\n", name, e.id)
	var res api.FilesAddResult
	if !k.w.call(k.d, "files.add", api.FilesAdd, map[string]any{"sessionId": e.id, "name": name,
		"contentBase64": base64.StdEncoding.EncodeToString([]byte(content))}, &res) {
		return
	}
	e.mu.Lock()
	e.files[name] = content
	e.mu.Unlock()
}

func (k *worker) removeFile(e *expected) {
	e.mu.Lock()
	var mine []string
	for name := range e.files {
		if strings.HasPrefix(name, k.name+"-") {
			mine = append(mine, name)
		}
	}
	e.mu.Unlock()
	if len(mine) == 0 {
		k.addFile(e)
		return
	}
	sort.Strings(mine)
	name := mine[k.rng.IntN(len(mine))]
	var res api.FilesRemoveResult
	if !k.w.call(k.d, "files.remove", api.FilesRemove, map[string]any{"sessionId": e.id, "name": name}, &res) {
		return
	}
	e.mu.Lock()
	delete(e.files, name)
	e.mu.Unlock()
}

func (k *worker) export(e *expected) {
	var res api.ExportResult
	if !k.w.call(k.d, "export", api.SessionExport, map[string]any{"sessionId": e.id}, &res) {
		return
	}
	if !strings.HasPrefix(res.Content, "# ") {
		k.w.t.Errorf("%s: export: %.80q", k.name, res.Content)
	}
	e.mu.Lock()
	e.exported[k.d.n] = true
	e.mu.Unlock()
}

// read makes one read of a kind picked at random.
func (k *worker) read() {
	k.w.reads.Add(1)
	e := k.pick()
	switch k.rng.IntN(5) {
	case 0:
		var res api.SessionListResult
		k.w.call(k.d, "session.list", api.SessionList, map[string]any{"limit": 20}, &res)
	case 1:
		var res api.ShowResult
		if k.w.call(k.d, "session.show", api.SessionShow, map[string]any{"sessionId": e.id}, &res) && res.Session.ID != e.id {
			k.w.t.Errorf("%s: show %s gave %s", k.name, e.id, res.Session.ID)
		}
	case 2:
		var res api.SearchResult
		k.w.call(k.d, "session.search", api.SessionSearch, map[string]any{"query": "question " + k.name}, &res)
	case 3:
		var res api.ContextGetResult
		k.w.call(k.d, "context.get", api.ContextGet, map[string]any{"sessionId": e.id}, &res)
	default:
		var res api.FilesListResult
		k.w.call(k.d, "files.list", api.FilesList, map[string]any{"sessionId": e.id}, &res)
	}
}

// contention names the errors of two writers getting in each other's
// way: SQLite's busy errors, PostgreSQL's deadlocks, serialization
// failures and running out of connections.
var contention = []string{"database is locked", "SQLITE_BUSY", "deadlock detected", "SQLSTATE 40P01",
	"could not serialize", "SQLSTATE 40001", "too many clients", "SQLSTATE 53300"}

// storeContention returns the first of contention in msg ("" if none).
func storeContention(msg string) string {
	for _, bad := range contention {
		if strings.Contains(msg, bad) {
			return bad
		}
	}
	return ""
}

// checkLog fails on store contention errors, panics and races in a
// daemon's log.
func checkLog(t testing.TB, who string, srv *lsptest.Server) {
	t.Helper()
	log := srv.Stderr()
	for _, bad := range append(slices.Clone(contention), "panic", "DATA RACE") {
		if i := strings.Index(log, bad); i >= 0 {
			from := max(0, strings.LastIndex(log[:i], "\n"))
			t.Errorf("%s logged %q: %.400s", who, bad, log[from:])
		}
	}
	if errs := srv.ProtocolErrors(); len(errs) > 0 {
		t.Errorf("%s: stdout carried non-protocol output: %q", who, errs)
	}
}

// verify reads everything back through a fresh daemon on cfg.verifyDir
// and compares it with the sum of the writes.
func (w *world) verify(cfg fourDaemons, ds []*daemon, rootURI string) {
	t := w.t
	dataDir := cfg.verifyDir
	srv := lsptest.Binary(t, []string{backend.StoreEnv + "="}, append([]string{"serve", "--data-dir", dataDir}, cfg.flags...)...)
	srv.Initialize(lsptest.InitOptions{RootURI: rootURI})
	d := &daemon{n: 4, srv: srv}

	listed := map[string]bool{}
	for cursor := ""; ; {
		var page api.SessionListResult
		if !w.call(d, "session.list", api.SessionList, map[string]any{"limit": 500, "cursor": cursor}, &page) {
			return
		}
		for _, s := range page.Sessions {
			listed[s.ID] = true
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	folders := map[string]bool{}
	live := 0
	// history.md is checked once the verifier has exited: a PostgreSQL
	// mirror renders it in the background after the folder is made.
	type history struct {
		id, folder, title string
		messages          []api.Message
	}
	var histories []history
	for id, e := range w.sessions {
		if e.deleted {
			if listed[id] {
				t.Errorf("session %s was deleted but is listed", id)
			}
			continue
		}
		live++
		if !listed[id] {
			t.Errorf("session %s (%q) is not listed", id, e.title)
			continue
		}
		var show api.ShowResult
		if !w.call(d, "show", api.SessionShow, map[string]any{"sessionId": id}, &show) {
			continue
		}
		ss := show.Session
		folders[filepath.Base(ss.Folder)] = true
		if ss.Title != e.title {
			t.Errorf("session %s: title %q, want %q (the last rename)", id, ss.Title, e.title)
		}
		if filepath.Dir(ss.Folder) != filepath.Join(dataDir, "sessions") || !strings.HasSuffix(ss.Folder, "--"+id[:6]) {
			t.Errorf("session %s: folder %s", id, ss.Folder)
		}
		// Messages: the same multiset, all complete.
		var got []string
		for _, m := range show.Messages {
			if m.Status != api.StatusComplete {
				t.Errorf("session %s: message %d is %s", id, m.ID, m.Status)
			}
			content := m.Content
			if m.Role == api.RoleSystem && m.SummaryOf != nil && content == fourDaemonsSummary {
				// A long shared session compacted (every original kept
				// beside it): the summary is the only message no worker
				// wrote.
				continue
			}
			if m.Role == api.RoleTool {
				var r struct {
					Items []string `json:"items"`
				}
				if json.Unmarshal([]byte(content), &r) == nil && len(r.Items) == 1 {
					content = r.Items[0]
				}
			}
			got = append(got, string(m.Role)+": "+content)
		}
		want := slices.Clone(e.messages)
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Errorf("session %s: %d messages, want %d; missing %q, unexpected %q", id, len(got), len(want), minus(want, got), minus(got, want))
		}
		// Context.
		var cg api.ContextGetResult
		if w.call(d, "context.get", api.ContextGet, map[string]any{"sessionId": id}, &cg) {
			if !equalSets(cg.Context, e.sets) {
				t.Errorf("session %s: context %v, want %v", id, cg.Context, e.sets)
			}
		}
		// Files: the names the server lists and the bytes on disk.
		var fl api.FilesListResult
		if w.call(d, "files.list", api.FilesList, map[string]any{"sessionId": id}, &fl) {
			var wantNames []string
			for name := range e.files {
				wantNames = append(wantNames, name)
			}
			sort.Strings(wantNames)
			if !slices.Equal(fl.Files, wantNames) && len(fl.Files)+len(wantNames) > 0 {
				t.Errorf("session %s: files missing %q, unexpected %q", id, minus(wantNames, fl.Files), minus(fl.Files, wantNames))
			}
			if ss.FileCount != len(wantNames) {
				t.Errorf("session %s: fileCount %d, want %d", id, ss.FileCount, len(wantNames))
			}
		}
		for name, content := range e.files {
			if data, err := os.ReadFile(filepath.Join(ss.Folder, "sources", name)); err != nil || string(data) != content {
				t.Errorf("session %s: %s on disk: %q %v", id, name, data, err)
			}
		}
		histories = append(histories, history{id, ss.Folder, e.title, show.Messages})
		// export.md moved with the folder. In a mirror it is a file of the
		// machine that exported, not of the database: it is in that
		// daemon's folder of the session (under whatever name it had
		// there last).
		if !cfg.mirrors {
			if _, err := os.Stat(filepath.Join(ss.Folder, "export.md")); len(e.exported) > 0 && err != nil {
				t.Errorf("session %s: exported but %v", id, err)
			}
		}
		for n := range e.exported {
			if !cfg.mirrors {
				break
			}
			matches, _ := filepath.Glob(filepath.Join(ds[n].dataDir, "sessions", "*--"+id[:6], "export.md"))
			if len(matches) != 1 {
				t.Errorf("session %s: exported by daemon %d, whose mirror holds %d export.md of it", id, n, len(matches))
			}
		}
		// Search finds the session's last turn.
		if len(e.turns) > 0 {
			word := e.turns[len(e.turns)-1]
			var sr api.SearchResult
			if w.call(d, "search", api.SessionSearch, map[string]any{"query": word}, &sr) &&
				!slices.ContainsFunc(sr.Hits, func(h api.Hit) bool { return h.SessionID == id }) {
				t.Errorf("session %s: search %q found %+v", id, word, sr.Hits)
			}
		}
	}
	if len(listed) != live {
		t.Errorf("%d sessions listed, want %d", len(listed), live)
	}
	// On disk: exactly the folders the database names.
	entries, err := os.ReadDir(filepath.Join(dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		if !folders[en.Name()] {
			t.Errorf("orphan in sessions/: %s", en.Name())
		}
	}
	if len(entries) != len(folders) {
		t.Errorf("%d entries in sessions/, %d sessions", len(entries), len(folders))
	}
	if cfg.mirrors {
		for _, d := range ds {
			w.checkMirror(d)
		}
	}
	t.Logf("verified %d sessions (%d deleted)", live, len(w.sessions)-live)
	srv.Shutdown()
	srv.Exit()
	checkLog(t, "verifier", srv)
	// No temporary files anywhere (looked for once the verifier, which
	// may write history.md, is gone).
	for _, dir := range slices.Compact(slices.Sorted(slices.Values(append([]string{dataDir}, cfg.dataDirs...)))) {
		filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
			if err == nil && (strings.HasPrefix(de.Name(), ".tmp-") || strings.HasPrefix(de.Name(), ".upload-")) {
				t.Errorf("temporary file left behind: %s", path)
			}
			return nil
		})
	}
	// history.md is current.
	for _, h := range histories {
		hist, err := os.ReadFile(filepath.Join(h.folder, "history.md"))
		if err != nil {
			t.Errorf("session %s: %v", h.id, err)
			continue
		}
		if !strings.HasPrefix(string(hist), "# "+h.title+"\n") {
			t.Errorf("session %s: history.md starts %q, want the title %q", h.id, strings.SplitN(string(hist), "\n", 2)[0], h.title)
		}
		for _, m := range h.messages {
			if !strings.Contains(string(hist), m.Content) {
				t.Errorf("session %s: history.md lacks message %d (%.60q)", h.id, m.ID, m.Content)
			}
		}
	}
}

// checkMirror checks a daemon's mirror of a PostgreSQL store as its
// daemon left it: each folder is a session's that was made (sessions
// renamed on another machine keep their old name until read here), none
// has two, and a deleted session has none (only its own daemon ever read
// a private session). Nothing was deleted in the shared ones.
func (w *world) checkMirror(d *daemon) {
	t := w.t
	entries, err := os.ReadDir(filepath.Join(d.dataDir, "sessions"))
	if err != nil {
		t.Errorf("daemon %d: %v", d.n, err)
		return
	}
	bySuffix := map[string]*expected{}
	for id, e := range w.sessions {
		bySuffix["--"+id[:6]] = e
	}
	seen := map[string]string{}
	for _, en := range entries {
		name := en.Name()
		var e *expected
		if i := strings.LastIndex(name, "--"); i >= 0 {
			e = bySuffix[name[i:]]
		}
		switch {
		case e == nil:
			t.Errorf("daemon %d's mirror: sessions/%s belongs to no session", d.n, name)
		case seen[e.id] != "":
			t.Errorf("daemon %d's mirror: session %s has two folders, %s and %s", d.n, e.id, seen[e.id], name)
		case e.deleted:
			t.Errorf("daemon %d's mirror: sessions/%s is of session %s, deleted by daemon %d", d.n, name, e.id, e.deleter)
		}
		if e != nil {
			seen[e.id] = name
		}
	}
}

// minus returns the items of a not in b (as multisets).
func minus(a, b []string) []string {
	left := slices.Clone(b)
	var out []string
	for _, x := range a {
		if i := slices.Index(left, x); i >= 0 {
			left = slices.Delete(left, i, i+1)
		} else {
			out = append(out, x)
		}
	}
	return out
}

func equalSets(got api.Context, want map[string][]string) bool {
	if len(got) != len(want) {
		return false
	}
	for name, items := range want {
		if !slices.Equal(got[name], items) {
			return false
		}
	}
	return true
}

var daemonPGWrites = flag.Int("daemon-pg-writes", 400, "writes per daemon in TestFourDaemonsOnePostgres")

// TestFourDaemonsOnePostgres is TestFourDaemonsOneDataDir on the
// PostgreSQL store: four daemons with a data directory each, as four
// machines, on one database (-daemon-pg-writes writes each, 400 by
// default). Turns in a shared session running on two machines at once meet
// the store's turn lock: the second is refused as busy and tried again, as
// an editor would. The checking daemon is a fifth machine, with an empty
// mirror: every session, message, context item and file must come from the
// database; each machine's mirror must hold no stray folder, none of a
// deleted session, and the exports made there.
func TestFourDaemonsOnePostgres(t *testing.T) {
	parallel(t, loadTests)
	writes := *daemonPGWrites
	if testing.Short() && writes > 100 {
		writes = 100
	}
	c := pgtest.Start(t)
	dsn := c.DSN("", "postgres")
	if _, err := backend.InitPostgres(context.Background(), dsn); err != nil {
		t.Fatal(err)
	}
	runFourDaemons(t, fourDaemons{
		dataDirs:  []string{t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()},
		verifyDir: t.TempDir(),
		flags:     []string{"--store", dsn},
		writes:    writes,
		mirrors:   true,
	})
}
