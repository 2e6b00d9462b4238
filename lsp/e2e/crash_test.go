package e2e_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/service"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

var (
	crashSeed  = flag.Int64("crash.seed", 0, "TestCrashRandomKills: PRNG seed (0: from the clock; the seed is always logged)")
	crashKills = flag.Int("crash.kills", 50, "TestCrashRandomKills: how many times the daemon is killed")
)

// crashSlack is the scheduling slack allowed on top of the checkpoint
// window: text the editor received more than Checkpoint+crashSlack before
// the kill must have been saved. It covers the save itself (a transaction)
// and a loaded 2-core machine; the summary logs the longest lag seen
// (463-469 ms in runs at load 4-6).
const crashSlack = 400 * time.Millisecond

// defaultAnswer is what the fake provider says when its queue is empty.
const defaultAnswer = "default answer"

// TestCrashRandomKills kills the built binary with SIGKILL at random
// moments while an editor streams chat turns (some calling tools, some
// stalling mid-answer), adds small and multi-MB files, renames sessions
// (moving their folders) and sets context, several at once. After each
// kill it checks the raw database with PRAGMA integrity_check, starts the
// next daemon on the same data directory and checks: every acknowledged
// session, message, context item, file and title is there; each
// interrupted answer is a prefix of what was streamed and holds what was
// streamed more than one checkpoint window (plus crashSlack) before the
// kill; no answer is left "streaming" once the next daemon started; every
// session folder exists once under the name the database records and
// nothing else is in sessions/; every file in sources/ is one whole version
// that was sent; and the daemon answers a command and a chat turn.
// TestCrashRandomKillsPostgres is the same run on the PostgreSQL store.
//
// Replay a failure with -crash.seed (timing still varies between runs);
// -crash.kills raises the number of kills for long local runs.
func TestCrashRandomKills(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the daemon 50 times")
	}
	parallel(t, timingTests)
	dataDir := t.TempDir()
	runCrashKills(t, dataDir, &sqliteCrashDB{path: filepath.Join(dataDir, "ctxls.db")}, *crashKills)
}

// runCrashKills is the crash suite on one store: kills daemons on dataDir
// that db selects, and checks db after each kill.
func runCrashKills(t *testing.T, dataDir string, db crashDB, kills int) {
	seed := *crashSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("crash seed %d (replay: go test ./lsp -run '^%s$' -crash.seed=%d)", seed, t.Name(), seed)
	r := newCrashRun(t, seed, dataDir, db)
	for i := 0; i < kills; i++ {
		r.iteration(i)
		if t.Failed() {
			t.Fatalf("failed at iteration %d of seed %d (replay: -crash.seed=%d)", i, seed, seed)
		}
	}
	r.final()
	if t.Failed() {
		t.Fatalf("failed after the last kill, seed %d (replay: -crash.seed=%d)", seed, seed)
	}
	r.summary()
}

// replyInfo is one scripted provider reply. Every content chunk names its
// reply ("r12.0003 "), so a stored answer or a delta says which reply it
// came from whatever order the fake served its queue in.
type replyInfo struct {
	key        string
	text       string // all content chunks
	stallAfter int    // > 0: the stream stalls after this many chunks
}

type delta struct {
	text string
	at   time.Time
}

// turnRec is one chat turn the editor sent.
type turnRec struct {
	iter   int
	msg    string
	token  string
	killAt time.Time // when its daemon was killed (zero: not killed)
	resp   *lsptest.Message
	// progress holds the turn's $/progress values in arrival order, filled
	// once the daemon is gone.
	progress []progressValue
	counted  bool // its interrupted answers are in the statistics
}

type progressValue struct {
	Kind    string `json:"kind"`
	Delta   string `json:"delta"`
	Message string `json:"message"`
	at      time.Time
}

type version struct {
	hash  [32]byte
	acked bool
}

type valueOp struct {
	value string
	acked bool
}

// sessModel is what the editor knows it did to one session.
type sessModel struct {
	id    string
	busy  map[string]bool // op kind → one in flight (guarded by crashRun.mu)
	files map[string][]*version
	// titles and sets are user changes in the order sent (one in flight at
	// a time per session and kind).
	titles []*valueOp
	sets   map[string][]*valueOp
	turns  []*turnRec
	// endpointsK is the highest reply number whose "endpoints" set the
	// daemon announced in ctxls/contextChanged.
	endpointsK int
}

// opRec is one request of an iteration, for the phase statistics.
type opRec struct {
	kind   string
	sentAt time.Time
	respAt time.Time
	turn   *turnRec
}

// crashDB is the store a crash run's daemons use, as the test reads it
// directly.
type crashDB interface {
	// flags are the daemon's flags that select the store.
	flags() []string
	// query runs one read-only SQL statement (written for both SQLite
	// and PostgreSQL) and returns its rows as column → value (strings,
	// float64 numbers, nil).
	query(q string) ([]map[string]any, error)
	// queries runs read-only statements in one go, and returns each one's
	// rows (one sqlite3 process instead of one each, under a loaded
	// machine's process start-up).
	queries(qs ...string) ([][]map[string]any, error)
	// integrity checks the database as a kill left it.
	integrity(r *crashRun)
	// emptySessions returns the ids of the sessions with nothing in them
	// (session.EmptyAfter), which session lists leave out.
	emptySessions(r *crashRun) ([]string, error)
	// checkFolders checks the session folders (the SQLite store's own, the
	// PostgreSQL store's mirror) against the database's sessions, with
	// daemon it up and idle; it returns each session's folder to check
	// files and history in ("": none to check). r.mu is held.
	checkFolders(r *crashRun, it *iter, folders map[string]string) map[string]string
}

// sqliteCrashDB is the SQLite store in the data directory.
type sqliteCrashDB struct{ path string }

func (*sqliteCrashDB) flags() []string { return nil }

func (db *sqliteCrashDB) query(q string) ([]map[string]any, error) { return query(db.path, true, q) }

func (db *sqliteCrashDB) queries(qs ...string) ([][]map[string]any, error) {
	return queries(db.path, true, qs...)
}

// emptySessions: the rows with nothing in them whose folder holds no file
// either (the SQLite store keeps files on disk only).
func (db *sqliteCrashDB) emptySessions(r *crashRun) ([]string, error) {
	rows, err := db.query("SELECT s.id, s.folder FROM sessions s WHERE " + emptySessionRow)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, row := range rows {
		files := 0
		for _, sub := range session.Subdirs {
			session.WalkFiles(filepath.Join(r.dataDir, "sessions", str(row, "folder"), sub), "", 8, func(string, fs.FileInfo) { files++ })
		}
		if files == 0 {
			out = append(out, str(row, "id"))
		}
	}
	return out, nil
}

// emptySessionRow is true for a session row with no message, no context
// item but the editor's view and a title not the user's (both stores).
const emptySessionRow = `s.title_source <> 'user'
	AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
	AND NOT EXISTS (SELECT 1 FROM context_items c WHERE c.session_id = s.id AND c.set_name <> 'applet')`

type crashRun struct {
	t       *testing.T
	seed    int64
	db      crashDB
	dataDir string
	ws      string
	env     []string
	fake    *openaitest.Server
	window  time.Duration

	// mu guards everything below.
	mu         sync.Mutex
	replies    map[string]*replyInfo
	nextReply  int
	nextN      int
	sessions   []*sessModel
	byID       map[string]*sessModel
	unackedNew int // session.new requests without an answer: rows that may appear
	turns      []*turnRec
	phases     map[string]int
	fileCache  map[string]string // path → "size/mtime" last verified
	stats      map[string]int
	iter       int
	delays     []time.Duration
	maxLag     time.Duration // longest time unsaved text had been streamed at a kill
}

func newCrashRun(t *testing.T, seed int64, dataDir string, db crashDB) *crashRun {
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{defaultAnswer}}))
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("workspace notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &crashRun{
		t: t, seed: seed, db: db, dataDir: dataDir, ws: ws, fake: fake,
		env:     []string{"OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY=", backend.StoreEnv + "="},
		window:  chat.DefaultCheckpoint,
		replies: map[string]*replyInfo{"default": {key: "default", text: defaultAnswer}},
		byID:    map[string]*sessModel{}, phases: map[string]int{}, fileCache: map[string]string{}, stats: map[string]int{},
	}
	return r
}

func (r *crashRun) errorf(format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("seed %d, iteration %d: %s", r.seed, r.iter, fmt.Sprintf(format, args...))
}

func (r *crashRun) rng(iter, stream int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(r.seed), uint64(iter)<<8|uint64(stream)))
}

func (r *crashRun) stat(name string, n int) {
	r.mu.Lock()
	r.stats[name] += n
	r.mu.Unlock()
}

// newReply scripts a reply and queues it at the fake provider. kind is
// "plain" for a short quick answer, or "" for a random one.
func (r *crashRun) newReply(rng *rand.Rand, kind string) *replyInfo {
	r.mu.Lock()
	r.nextReply++
	key := fmt.Sprintf("r%d", r.nextReply)
	r.mu.Unlock()
	n := 2 + rng.IntN(30)
	if rng.IntN(4) == 0 {
		n = 40 + rng.IntN(60) // a long answer, often still streaming at the kill
	}
	delay := time.Duration(5+rng.IntN(35)) * time.Millisecond
	if kind == "plain" {
		n, delay = 3, 0
	}
	chunks := make([]string, n)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("%s.%04d ", key, i)
	}
	rep := openaitest.Reply{Chunks: chunks, Delay: delay}
	info := &replyInfo{key: key}
	x := 100
	if kind == "" {
		x = rng.IntN(100)
	}
	switch {
	case x < 25: // a tool round: a little text, then one or two calls
		rep.Chunks = chunks[:min(len(chunks), 1+rng.IntN(3))]
		kinds := []int{0, 1, 2, 3, 4}
		rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		for i, k := range kinds[:1+rng.IntN(2)] {
			id := fmt.Sprintf("call_%s_%d", key, i)
			var tc openaitest.ToolCall
			switch k {
			case 0:
				tc = openaitest.ToolCall{ID: id, Name: "set_relevant_context", Arguments: fmt.Sprintf(`{"setName":"endpoints","items":["%s-0","%s-1"]}`, key, key)}
			case 1:
				tc = openaitest.ToolCall{ID: id, Name: "set_relevant_context", Arguments: fmt.Sprintf(`{"setName":"files","items":[%q]}`, filepath.Join(r.ws, "notes.txt"))}
			case 2:
				p := "sources/a.txt"
				if rng.IntN(2) == 0 {
					p = "notes.txt"
				}
				tc = openaitest.ToolCall{ID: id, Name: "read_file", Arguments: fmt.Sprintf(`{"path":%q}`, p)}
			case 3:
				tc = openaitest.ToolCall{ID: id, Name: "list_session_files", Arguments: `{}`}
			case 4:
				tc = openaitest.ToolCall{ID: id, Name: "get_relevant_context", Arguments: `{}`}
			}
			rep.ToolCalls = append(rep.ToolCalls, tc)
		}
	case x < 37: // the model pauses mid-answer (until the kill)
		rep.Fault = openaitest.FaultStall
		rep.FaultAfter = 1 + rng.IntN(len(chunks)-1)
		info.stallAfter = rep.FaultAfter
	}
	info.text = strings.Join(rep.Chunks, "")
	r.mu.Lock()
	r.replies[key] = info
	r.mu.Unlock()
	r.fake.Enqueue(rep)
	return info
}

// drain empties the fake provider's queue (the daemon is dead): replies
// queued for turns the kill cut short must not reach the next daemon's
// verification turn.
func (r *crashRun) drain() { r.fake.Clear() }

// iter is one daemon's life.
type iter struct {
	r      *crashRun
	n      int
	s      *lsptest.Server
	initAt time.Time // initialize answered (zero: never)
	killAt time.Time
	gone   chan struct{} // closed at the kill
	exited chan struct{} // closed once the daemon is gone and its output read
	// mu guards ops.
	mu  sync.Mutex
	ops []*opRec
}

func (it *iter) dead() bool {
	select {
	case <-it.gone:
		return true
	default:
		return false
	}
}

// call sends a request and waits for its answer or the daemon's death.
func (it *iter) call(kind, method string, params any, tr *turnRec) (*lsptest.Message, *opRec) {
	rec := &opRec{kind: kind, sentAt: time.Now(), turn: tr}
	it.mu.Lock()
	it.ops = append(it.ops, rec)
	it.mu.Unlock()
	m := <-it.s.Async(method, params)
	if m != nil {
		rec.respAt = m.At
	}
	return m, rec
}

func (it *iter) command(kind, id string, arg any) (*lsptest.Message, *opRec) {
	return it.call(kind, "workspace/executeCommand", map[string]any{"command": id, "arguments": []any{arg}}, nil)
}

// startDaemon starts daemon n on the data directory.
func (r *crashRun) startDaemon(n int) *iter {
	it := &iter{r: r, n: n, gone: make(chan struct{}), exited: make(chan struct{})}
	it.s = lsptest.Binary(r.t, r.env, append([]string{"serve", "--data-dir", r.dataDir}, r.db.flags()...)...)
	return it
}

// initialize runs initialize; it reports false if the daemon was killed
// first.

func (it *iter) initialize() bool {
	params := map[string]any{
		"processId":        nil,
		"capabilities":     map[string]any{},
		"rootUri":          "file://" + it.r.ws,
		"workspaceFolders": []any{map[string]any{"uri": "file://" + it.r.ws, "name": "ws"}},
	}
	m, _ := it.call("initialize", "initialize", params, nil)
	if m == nil {
		return false
	}
	if m.Error != nil {
		it.r.errorf("initialize: %v", m.Error)
		return false
	}
	it.initAt = m.At
	it.s.Notify("initialized", map[string]any{})
	return true
}

// kill sends SIGKILL and waits until the daemon is gone and everything it
// wrote before has been read.
func (it *iter) kill() {
	it.killAt = time.Now()
	it.s.Kill()
	close(it.gone)
	it.s.Exit()
	close(it.exited)
}

// iteration runs daemon n: it checks the state the previous kill left,
// verifies the daemon serves, drives random work and kills it.
func (r *crashRun) iteration(n int) {
	r.mu.Lock()
	r.iter = n
	r.mu.Unlock()
	rng := r.rng(n, 0)
	startupKill := n > 0 && rng.IntN(10) == 0
	it := r.startDaemon(n)
	var wg sync.WaitGroup
	var delay time.Duration
	if startupKill {
		// Kill while the daemon starts: before, during or just after
		// initialize (which opens and migrates the store).
		delay = time.Duration(rng.IntN(40)) * time.Millisecond
		go func() {
			time.Sleep(delay)
			it.kill()
		}()
		if it.initialize() {
			r.workers(it, rng, &wg)
		}
	} else {
		if !it.initialize() {
			r.t.Fatalf("seed %d, iteration %d: the daemon did not initialize; stderr:\n%s", r.seed, n, it.s.Stderr())
		}
		if n > 0 {
			r.checkState(it)
			if r.t.Failed() {
				return
			}
		}
		r.verify(it, 1)
		if r.t.Failed() {
			r.t.Logf("daemon stderr:\n%s", it.s.Stderr())
			return
		}
		switch x := rng.IntN(100); {
		case x < 15: // the very first moments of the work
			delay = time.Duration(rng.IntN(30)) * time.Millisecond
		case x < 50:
			delay = time.Duration(30+rng.IntN(670)) * time.Millisecond
		default: // late enough for checkpoints to be due
			delay = time.Duration(700+rng.IntN(900)) * time.Millisecond
		}
		opsStart := time.Now()
		r.workers(it, rng, &wg)
		time.Sleep(time.Until(opsStart.Add(delay)))
		it.kill()
	}
	<-it.exited
	wg.Wait()
	r.mu.Lock()
	r.delays = append(r.delays, delay)
	r.mu.Unlock()
	r.afterKill(it)
}

// workers starts three editor goroutines doing random work until the kill.
func (r *crashRun) workers(it *iter, rng *rand.Rand, wg *sync.WaitGroup) {
	for w := 1; w <= 3; w++ {
		wrng := r.rng(it.n, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !it.dead() {
				r.randomOp(it, wrng)
			}
		}()
	}
}

// pick returns a session with no op of kind in flight, marking it busy.
func (r *crashRun) pick(rng *rand.Rand, kind string) *sessModel {
	r.mu.Lock()
	defer r.mu.Unlock()
	var free []*sessModel
	for _, s := range r.sessions {
		if !s.busy[kind] {
			free = append(free, s)
		}
	}
	if len(free) == 0 {
		return nil
	}
	s := free[rng.IntN(len(free))]
	s.busy[kind] = true
	return s
}

func (r *crashRun) release(s *sessModel, kind string) {
	r.mu.Lock()
	s.busy[kind] = false
	r.mu.Unlock()
}

func (r *crashRun) next() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextN++
	return r.nextN
}

func (r *crashRun) randomOp(it *iter, rng *rand.Rand) {
	r.mu.Lock()
	nSessions := len(r.sessions)
	r.mu.Unlock()
	x := rng.IntN(100)
	if nSessions == 0 || nSessions < 8 && x < 6 {
		r.opNewSession(it, rng)
		return
	}
	var kind string
	switch {
	case x < 45:
		kind = "chat"
	case x < 60:
		kind = "files.add small"
	case x < 68:
		kind = "files.add large"
	case x < 85:
		kind = "session.rename"
	default:
		kind = "context.set"
	}
	busyKind := kind
	if strings.HasPrefix(kind, "files.add") {
		busyKind = "files.add"
	}
	s := r.pick(rng, busyKind)
	if s == nil {
		time.Sleep(5 * time.Millisecond)
		return
	}
	defer r.release(s, busyKind)
	switch kind {
	case "chat":
		r.opChat(it, rng, s, false)
	case "files.add small", "files.add large":
		r.opAddFile(it, rng, s, kind == "files.add large")
	case "session.rename":
		r.opRename(it, s)
	case "context.set":
		r.opContext(it, rng, s)
	}
}

func (r *crashRun) opNewSession(it *iter, rng *rand.Rand) {
	title := ""
	if rng.IntN(2) == 0 {
		title = fmt.Sprintf("Session %d", r.next())
	}
	r.mu.Lock()
	r.unackedNew++
	r.mu.Unlock()
	m, _ := it.command("session.new", api.SessionNew, map[string]any{"title": title})
	if m == nil {
		return
	}
	if m.Error != nil {
		r.errorf("session.new: %v", m.Error)
		return
	}
	var res api.SessionResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		r.errorf("session.new result %s: %v", m.Result, err)
		return
	}
	r.mu.Lock()
	r.unackedNew--
	r.addSessionLocked(res.Session.ID)
	r.mu.Unlock()
	r.stat("acked session.new", 1)
}

func (r *crashRun) addSessionLocked(id string) *sessModel {
	s := &sessModel{id: id, busy: map[string]bool{}, files: map[string][]*version{}, sets: map[string][]*valueOp{}}
	r.sessions = append(r.sessions, s)
	r.byID[id] = s
	return s
}

// opChat runs one turn; a verification turn gets a short plain answer.
func (r *crashRun) opChat(it *iter, rng *rand.Rand, s *sessModel, verify bool) *turnRec {
	n := r.next()
	tr := &turnRec{iter: it.n, msg: fmt.Sprintf("turn %d.%d: what next?", it.n, n), token: fmt.Sprintf("crash-%d-%d", it.n, n)}
	if verify {
		r.newReply(rng, "plain")
	} else {
		// Two replies: the turn's, and one for a tool round or the
		// background title request.
		r.newReply(rng, "")
		r.newReply(rng, "")
	}
	r.mu.Lock()
	s.turns = append(s.turns, tr)
	r.turns = append(r.turns, tr)
	r.mu.Unlock()
	m, _ := it.call("chat", "ctxls/chat", map[string]any{"sessionId": s.id, "message": tr.msg, "workDoneToken": tr.token}, tr)
	tr.resp = m
	if m != nil && m.Error != nil {
		r.errorf("chat turn %q: %v", tr.msg, m.Error)
	}
	if m != nil {
		r.stat("acked chat turns", 1)
	}
	return tr
}

func (r *crashRun) opAddFile(it *iter, rng *rand.Rand, s *sessModel, large bool) {
	n := r.next()
	name := []string{"a.txt", "b.txt"}[rng.IntN(2)]
	size := 10 + rng.IntN(64<<10)
	if large {
		name, size = "big.bin", 1<<20+rng.IntN(3<<20)
	}
	header := fmt.Sprintf("%s %s version %d\n", s.id[:6], name, n)
	data := append([]byte(header), bytes.Repeat([]byte(fmt.Sprintf("%d ", n)), size/4)...)
	v := &version{hash: sha256.Sum256(data)}
	r.mu.Lock()
	s.files[name] = append(s.files[name], v)
	r.mu.Unlock()
	arg := map[string]any{"sessionId": s.id}
	kind := "files.add small"
	switch {
	case large && rng.IntN(4) == 0:
		// A multi-MB file inline: a big frame the daemon decodes.
		arg["name"], arg["contentBase64"] = name, base64.StdEncoding.EncodeToString(data)
		kind = "files.add large"
	case large:
		dir := filepath.Join(r.ws, "big", fmt.Sprint(n))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			r.t.Error(err)
			return
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			r.t.Error(err)
			return
		}
		defer os.RemoveAll(dir)
		arg["path"] = path
		kind = "files.add large"
	default:
		arg["name"], arg["contentBase64"] = name, base64.StdEncoding.EncodeToString(data)
	}
	m, _ := it.command(kind, api.FilesAdd, arg)
	if m == nil {
		return
	}
	if m.Error != nil {
		r.errorf("files.add %s: %v", name, m.Error)
		return
	}
	r.mu.Lock()
	v.acked = true
	r.mu.Unlock()
	r.stat("acked "+kind, 1)
}

func (r *crashRun) opRename(it *iter, s *sessModel) {
	op := &valueOp{value: fmt.Sprintf("Renamed %d by the user", r.next())}
	r.mu.Lock()
	s.titles = append(s.titles, op)
	r.mu.Unlock()
	m, _ := it.command("session.rename", api.SessionRename, map[string]any{"sessionId": s.id, "title": op.value})
	if m == nil {
		return
	}
	if m.Error != nil {
		r.errorf("session.rename: %v", m.Error)
		return
	}
	r.mu.Lock()
	op.acked = true
	r.mu.Unlock()
	r.stat("acked session.rename", 1)
}

func (r *crashRun) opContext(it *iter, rng *rand.Rand, s *sessModel) {
	n := r.next()
	set := []string{"applet", "ports"}[rng.IntN(2)]
	items := []string{fmt.Sprintf("u%d-0", n)}
	if rng.IntN(2) == 0 {
		items = append(items, fmt.Sprintf("u%d-1", n))
	}
	op := &valueOp{value: strings.Join(items, ",")}
	r.mu.Lock()
	s.sets[set] = append(s.sets[set], op)
	r.mu.Unlock()
	m, _ := it.command("context.set", api.ContextSet, map[string]any{"sessionId": s.id, "setName": set, "items": items})
	if m == nil {
		return
	}
	if m.Error != nil {
		r.errorf("context.set: %v", m.Error)
		return
	}
	r.mu.Lock()
	op.acked = true
	r.mu.Unlock()
	r.stat("acked context.set", 1)
}

var replyKey = regexp.MustCompile(`^(r\d+)\.\d{4} `)

// keyOf names the reply a delta or stored answer came from ("" if none).
func keyOf(text string) string {
	if m := replyKey.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	if strings.HasPrefix(text, defaultAnswer) {
		return "default"
	}
	return ""
}

// afterKill gathers what the editor received from the dead daemon, counts
// the phases the kill hit and checks the raw database.
func (r *crashRun) afterKill(it *iter) {
	received := it.s.Received()
	byToken := map[string][]progressValue{}
	for _, m := range received {
		switch {
		case m.Method == "$/progress":
			var p struct {
				Token any           `json:"token"`
				Value progressValue `json:"value"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			p.Value.at = m.At
			tok := fmt.Sprint(p.Token)
			byToken[tok] = append(byToken[tok], p.Value)
		case m.Method == api.ContextChanged:
			var p api.ContextChangedParams
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			if items := p.Context["endpoints"]; len(items) > 0 {
				k := endpointsK(items)
				r.mu.Lock()
				if s := r.byID[p.SessionID]; s != nil && k > s.endpointsK {
					s.endpointsK = k
				}
				r.mu.Unlock()
			}
		}
	}
	r.mu.Lock()
	for _, tr := range r.turns {
		if tr.iter == it.n {
			tr.progress = byToken[tr.token]
			tr.killAt = it.killAt
		}
	}
	r.mu.Unlock()
	for _, p := range r.phasesAt(it) {
		r.phases[p]++
	}
	r.drain()
	r.db.integrity(r)
}

func endpointsK(items []string) int {
	var k int
	fmt.Sscanf(items[0], "r%d-", &k)
	return k
}

// phasesAt says what the daemon was doing when it was killed.
func (r *crashRun) phasesAt(it *iter) []string {
	if it.initAt.IsZero() || it.initAt.After(it.killAt) {
		return []string{"startup (before initialize answered)"}
	}
	var out []string
	it.mu.Lock()
	defer it.mu.Unlock()
	for _, op := range it.ops {
		if op.sentAt.After(it.killAt) || !op.respAt.IsZero() && op.respAt.Before(it.killAt) {
			continue
		}
		if op.turn == nil {
			out = append(out, op.kind)
			continue
		}
		var last *progressValue
		deltas := 0
		for i := range op.turn.progress {
			p := &op.turn.progress[i]
			if p.at.After(it.killAt) {
				break
			}
			if p.Kind == "report" {
				last = p
				if p.Delta != "" {
					deltas++
				}
			}
		}
		switch {
		case last == nil:
			out = append(out, "chat: before the first token")
		case last.Message != "":
			out = append(out, "chat: between tool rounds")
		default:
			rep := r.replies[keyOf(last.Delta)]
			if rep != nil && rep.stallAfter > 0 && countKey(op.turn.progress, rep.key, it.killAt) == rep.stallAfter {
				out = append(out, "chat: stalled mid-answer")
			} else {
				out = append(out, "chat: streaming")
			}
		}
	}
	if len(out) == 0 {
		return []string{"idle"}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func countKey(ps []progressValue, key string, before time.Time) int {
	n := 0
	for _, p := range ps {
		if p.Delta != "" && keyOf(p.Delta) == key && !p.at.After(before) {
			n++
		}
	}
	return n
}

// sqliteCLI is the sqlite3 command if installed: under -race the
// modernc driver takes up to a second to open the crash state's 4 MB WAL,
// the CLI a few milliseconds. Without it the test uses modernc.
var sqliteCLI, _ = exec.LookPath("sqlite3")

// queries runs SQL statements on the database at path and returns each
// one's rows as query does: with the sqlite3 command, all in one process,
// each statement's rows after a marker row naming it.
func queries(path string, readOnly bool, qs ...string) ([][]map[string]any, error) {
	out := make([][]map[string]any, len(qs))
	if sqliteCLI == "" {
		for i, q := range qs {
			rows, err := query(path, readOnly, q)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", q, err)
			}
			out[i] = rows
		}
		return out, nil
	}
	var script strings.Builder
	for i, q := range qs {
		fmt.Fprintf(&script, "SELECT %d AS query_marker; %s;\n", i, q)
	}
	args := []string{"-json", "-bail", "-cmd", ".timeout 10000"}
	if readOnly {
		args = append(args, "-readonly")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(sqliteCLI, append(args, path, script.String())...)
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	dec := json.NewDecoder(bytes.NewReader(raw))
	at := -1
	for {
		var rows []map[string]any
		if derr := dec.Decode(&rows); derr == io.EOF {
			break
		} else if derr != nil {
			return nil, fmt.Errorf("sqlite3 output %q: %v", raw, derr)
		}
		if len(rows) == 1 && len(rows[0]) == 1 && rows[0]["query_marker"] != nil {
			n, _ := rows[0]["query_marker"].(float64)
			at = int(n)
			continue
		}
		if at < 0 || at >= len(qs) {
			return nil, fmt.Errorf("sqlite3 output %q: rows before a marker", raw)
		}
		out[at] = append(out[at], rows...)
	}
	if err != nil {
		failed := "the first statement"
		if at >= 0 {
			failed = qs[at]
		}
		return nil, fmt.Errorf("sqlite3 (at %s): %v: %s", failed, err, stderr.String())
	}
	return out, nil
}

// query runs one SQL statement on the database at path and returns its
// rows as column → value (strings, float64 numbers, nil).
func query(path string, readOnly bool, q string) ([]map[string]any, error) {
	if sqliteCLI != "" {
		args := []string{"-json", "-cmd", ".timeout 10000"}
		if readOnly {
			args = append(args, "-readonly")
		}
		var stderr bytes.Buffer
		cmd := exec.Command(sqliteCLI, append(args, path, q)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("sqlite3: %v: %s", err, stderr.String())
		}
		var rows []map[string]any
		if len(bytes.TrimSpace(out)) > 0 {
			if err := json.Unmarshal(out, &rows); err != nil {
				return nil, fmt.Errorf("sqlite3 output %q: %v", out, err)
			}
		}
		return rows, nil
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)"
	if readOnly {
		dsn += "&mode=ro"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rs, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var rows []map[string]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := map[string]any{}
		for i, c := range cols {
			switch v := vals[i].(type) {
			case []byte:
				row[c] = string(v)
			case int64:
				row[c] = float64(v)
			default:
				row[c] = v
			}
		}
		rows = append(rows, row)
	}
	return rows, rs.Err()
}

func str(row map[string]any, col string) string {
	s, _ := row[col].(string)
	return s
}

// integrity checks a copy of the database as the kill left it (the copy
// may be written: recovering the WAL, FTS5's integrity-check): PRAGMA
// integrity_check, foreign keys, and both full-text indexes against their
// tables.
func (db *sqliteCrashDB) integrity(r *crashRun) {
	src := db.path
	if _, err := os.Stat(src); err != nil {
		return // killed before the store was created
	}
	dst := filepath.Join(r.t.TempDir(), "ctxls.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		data, err := os.ReadFile(src + suffix)
		if err != nil {
			continue
		}
		if err := os.WriteFile(dst+suffix, data, 0o600); err != nil {
			r.t.Fatal(err)
		}
	}
	checks, err := queries(dst, false, "PRAGMA integrity_check", "PRAGMA foreign_key_check",
		"INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 1)",
		"INSERT INTO titles_fts(titles_fts, rank) VALUES('integrity-check', 1)")
	if err != nil {
		r.errorf("integrity checks: %v", err)
	} else {
		if rows := checks[0]; len(rows) != 1 || str(rows[0], "integrity_check") != "ok" {
			r.errorf("integrity_check: %v", rows)
		}
		if rows := checks[1]; len(rows) != 0 {
			r.errorf("foreign_key_check: %v", rows)
		}
	}
	r.stat("integrity checks", 1)
}

type dbMessage struct {
	id                             int64
	session, role, content, status string
	toolCalls, toolCallID          string
}

// checkState checks the database and the folders against everything the
// editor was told, with the next daemon up and idle.
func (r *crashRun) checkState(it *iter) {
	// The store opens after initialize's answer: a command that reads it
	// waits for the open, which marks what the killed daemon left
	// streaming as interrupted.
	if err := it.s.Command(api.SessionList, map[string]any{}, nil); err != nil {
		r.errorf("the first command after start-up: %v", err)
		return
	}
	read, err := r.db.queries(
		"SELECT id, title, title_source, folder FROM sessions",
		"SELECT id, session_id, role, content, coalesce(tool_calls, '') AS tool_calls, coalesce(tool_call_id, '') AS tool_call_id, status FROM messages ORDER BY id",
		"SELECT session_id, set_name, item FROM context_items ORDER BY session_id, set_name, position")
	if err != nil {
		r.errorf("reading the state: %v", err)
		return
	}
	type row struct{ id, title, source, folder string }
	dbSessions := map[string]row{}
	for _, x := range read[0] {
		dbSessions[str(x, "id")] = row{str(x, "id"), str(x, "title"), str(x, "title_source"), str(x, "folder")}
	}
	msgs := map[string][]dbMessage{}
	for _, x := range read[1] {
		id, _ := x["id"].(float64)
		m := dbMessage{id: int64(id), session: str(x, "session_id"), role: str(x, "role"), content: str(x, "content"),
			toolCalls: str(x, "tool_calls"), toolCallID: str(x, "tool_call_id"), status: str(x, "status")}
		msgs[m.session] = append(msgs[m.session], m)
		// The next daemon's start marks what killed daemons left
		// streaming as interrupted (their processes are gone).
		if m.status == "streaming" {
			r.errorf("session %s: message %d is still \"streaming\" after the next daemon started", m.session, m.id)
		}
	}
	sets := map[string]map[string][]string{}
	for _, x := range read[2] {
		id, set := str(x, "session_id"), str(x, "set_name")
		if sets[id] == nil {
			sets[id] = map[string][]string{}
		}
		sets[id][set] = append(sets[id][set], str(x, "item"))
	}
	if r.t.Failed() {
		return
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	// Sessions: every acknowledged one is there; rows nobody was told of
	// can only come from session.new requests the kill cut short.
	for _, s := range r.sessions {
		if _, ok := dbSessions[s.id]; !ok {
			r.errorf("acknowledged session %s is gone", s.id)
		}
	}
	var unknown []string
	for id := range dbSessions {
		if r.byID[id] == nil {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > r.unackedNew {
		r.errorf("%d sessions nobody created (unanswered session.new: %d)", len(unknown), r.unackedNew)
	}
	sort.Strings(unknown)
	for _, id := range unknown {
		r.addSessionLocked(id)
		r.stats["sessions created but not acknowledged"]++
	}
	r.unackedNew = 0

	// The folder names the database records follow the titles.
	dbFolders := map[string]string{}
	for _, x := range dbSessions {
		dbFolders[x.id] = x.folder
		if !strings.HasSuffix(x.folder, "--"+x.id[:6]) || !strings.Contains(x.folder, "--"+session.Slug(x.title)+"--") {
			r.errorf("session %s: folder %s does not match its title %q", x.id, x.folder, x.title)
		}
	}
	folders := r.db.checkFolders(r, it, dbFolders)
	// Uploads a kill cut short stay in tmp/ (outside every session folder)
	// until they are an hour old; count them.
	if tmp, err := os.ReadDir(filepath.Join(r.dataDir, "tmp")); err == nil {
		r.stats["most uploads left in tmp/ by kills"] = max(r.stats["most uploads left in tmp/ by kills"], len(tmp))
	}

	temporaries := 0
	defer func() {
		r.stats["most history.md temporaries left by kills"] = max(r.stats["most history.md temporaries left by kills"], temporaries)
	}()
	for _, s := range r.sessions {
		x, ok := dbSessions[s.id]
		if !ok {
			continue
		}
		folder := folders[s.id]
		// Titles: the last acknowledged user title, or one sent after it.
		if j := lastAcked(s.titles); j >= 0 {
			if x.source != "user" || !slices.ContainsFunc(s.titles[j:], func(o *valueOp) bool { return o.value == x.title }) {
				r.errorf("session %s: title %q (%s), want the acknowledged %q or a later one", s.id, x.title, x.source, s.titles[j].value)
			}
		}
		// Context the user set.
		for set, ops := range s.sets {
			got := strings.Join(sets[s.id][set], ",")
			if j := lastAcked(ops); j >= 0 && !slices.ContainsFunc(ops[j:], func(o *valueOp) bool { return o.value == got }) {
				r.errorf("session %s: context set %s is %q, want the acknowledged %q or a later one", s.id, set, got, ops[j].value)
			}
		}
		// Context the model set: all items of one call, not older than
		// the last one announced.
		if items := sets[s.id]["endpoints"]; len(items) > 0 || s.endpointsK > 0 {
			k := 0
			if len(items) > 0 {
				k = endpointsK(items)
			}
			want := []string{fmt.Sprintf("r%d-0", k), fmt.Sprintf("r%d-1", k)}
			if !slices.Equal(items, want) || k < s.endpointsK {
				r.errorf("session %s: endpoints set %v, want the items of one call at or after r%d", s.id, items, s.endpointsK)
			}
		}
		r.checkMessages(s, msgs[s.id])
		if folder == "" {
			continue
		}
		// history.md is written through a temporary file, which a kill can
		// leave behind (hidden, never listed); count them.
		if entries, err := os.ReadDir(filepath.Join(r.dataDir, "sessions", folder)); err == nil {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".tmp-") {
					temporaries++
				}
			}
		}
		r.checkFiles(s, filepath.Join(r.dataDir, "sessions", folder, "sources"))
	}
}

// checkFolders: in the SQLite store the session folders are exactly the
// ones the database names, nothing else, at once after a kill (Open moves
// a half-renamed folder back and removes half-made ones).
func (*sqliteCrashDB) checkFolders(r *crashRun, _ *iter, dbFolders map[string]string) map[string]string {
	checkExactFolders(r, dbFolders)
	return dbFolders
}

// checkExactFolders: sessions/ holds the folders dbFolders names (session
// → folder), nothing else.
func checkExactFolders(r *crashRun, dbFolders map[string]string) {
	entries, err := os.ReadDir(filepath.Join(r.dataDir, "sessions"))
	if err != nil {
		r.errorf("reading sessions/: %v", err)
		return
	}
	onDisk := map[string]bool{}
	for _, e := range entries {
		onDisk[e.Name()] = true
		if !e.IsDir() {
			r.errorf("sessions/%s is not a folder", e.Name())
		}
	}
	named := map[string]bool{}
	for id, folder := range dbFolders {
		named[folder] = true
		if !onDisk[folder] {
			r.errorf("session %s: its folder %s does not exist (half-renamed?); sessions/ holds %v", id, folder, names(entries))
		}
	}
	for name := range onDisk {
		if !named[name] {
			r.errorf("sessions/%s belongs to no session (a stray, temporary or old-named folder)", name)
		}
	}
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func lastAcked(ops []*valueOp) int {
	for j := len(ops) - 1; j >= 0; j-- {
		if ops[j].acked {
			return j
		}
	}
	return -1
}

// checkFiles: each file is one whole version that was sent, at least the
// last acknowledged one; nothing else is listed.
func (r *crashRun) checkFiles(s *sessModel, dir string) {
	entries, _ := os.ReadDir(dir)
	present := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			r.stats["hidden leftovers in sources/"]++
			r.errorf("session %s: leftover temporary file sources/%s", s.id, e.Name())
			continue
		}
		present[e.Name()] = true
		if s.files[e.Name()] == nil {
			r.errorf("session %s: sources/%s was never added", s.id, e.Name())
		}
	}
	for name, versions := range s.files {
		j := -1
		for i, v := range versions {
			if v.acked {
				j = i
			}
		}
		path := filepath.Join(dir, name)
		if !present[name] {
			if j >= 0 {
				r.errorf("session %s: acknowledged file %s is gone", s.id, name)
			}
			continue
		}
		fi, err := os.Stat(path)
		if err != nil {
			r.errorf("session %s: %v", s.id, err)
			continue
		}
		stamp := fmt.Sprintf("%d/%d/%d", fi.Size(), fi.ModTime().UnixNano(), max(j, 0))
		if r.fileCache[path] == stamp {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			r.errorf("session %s: %v", s.id, err)
			continue
		}
		h := sha256.Sum256(data)
		from := max(j, 0)
		if !slices.ContainsFunc(versions[from:], func(v *version) bool { return v.hash == h }) {
			head, _, _ := bytes.Cut(data[:min(len(data), 80)], []byte("\n"))
			r.errorf("session %s: sources/%s (%d bytes, %q) is not a whole version sent at or after the last acknowledged one", s.id, name, len(data), head)
			continue
		}
		r.fileCache[path] = stamp
	}
}

// checkMessages checks one session's messages against its turns.
func (r *crashRun) checkMessages(s *sessModel, msgs []dbMessage) {
	byText := map[string]int{}
	lastUser := -1
	for i, m := range msgs {
		if m.role == "user" {
			byText[m.content] = i
			lastUser = i
		}
	}
	for i, m := range msgs {
		if m.status == "streaming" && i < lastUser {
			r.errorf("session %s: message %d is still \"streaming\" after a later turn started", s.id, m.id)
		}
		// An answer never ends "error" here (a tool's result may: a tool
		// that failed, say a read racing a rename of the session folder).
		if m.status == "error" && m.role != "tool" {
			r.errorf("session %s: message %d ended \"error\": %q", s.id, m.id, m.content)
		}
	}
	known := map[string]bool{}
	for _, tr := range s.turns {
		known[tr.msg] = true
		r.checkTurn(s, tr, msgs, byText)
	}
	for _, m := range msgs {
		if m.role == "user" && !known[m.content] {
			r.errorf("session %s: user message %q was never sent", s.id, m.content)
		}
	}
}

func (r *crashRun) checkTurn(s *sessModel, tr *turnRec, msgs []dbMessage, byText map[string]int) {
	// Rounds as the editor saw them: consecutive deltas of one reply.
	type round struct {
		key    string
		deltas []delta
	}
	var rounds []round
	for _, p := range tr.progress {
		if p.Delta == "" {
			continue
		}
		k := keyOf(p.Delta)
		if k == "" {
			continue // the tool-round limit note
		}
		if len(rounds) == 0 || rounds[len(rounds)-1].key != k {
			rounds = append(rounds, round{key: k})
		}
		rounds[len(rounds)-1].deltas = append(rounds[len(rounds)-1].deltas, delta{p.Delta, p.at})
	}
	ui, ok := byText[tr.msg]
	if !ok {
		if tr.resp != nil || len(rounds) > 0 {
			r.errorf("session %s: user message %q is gone although the turn was answered or streamed", s.id, tr.msg)
		}
		return
	}
	var answers []dbMessage
	var prev *dbMessage
	for _, m := range msgs[ui+1:] {
		if m.role == "user" {
			break
		}
		switch m.role {
		case "assistant":
			if strings.HasPrefix(m.content, "[stopped:") {
				continue
			}
			answers = append(answers, m)
			prev = &answers[len(answers)-1]
		case "tool":
			if prev == nil || !strings.Contains(prev.toolCalls, `"`+m.toolCallID+`"`) {
				r.errorf("session %s: tool message %d answers call %q that no earlier answer made", s.id, m.id, m.toolCallID)
			}
		}
	}
	if len(answers) < len(rounds) {
		r.errorf("session %s, turn %q: %d answers stored for %d streamed rounds", s.id, tr.msg, len(answers), len(rounds))
		return
	}
	for i, a := range answers {
		if i >= len(rounds) {
			if a.content != "" || a.status == "complete" {
				r.errorf("session %s, turn %q: answer %d (%s) %q was never streamed", s.id, tr.msg, a.id, a.status, a.content)
			}
			continue
		}
		rep := r.replies[rounds[i].key]
		if rep == nil {
			r.errorf("unknown reply %s", rounds[i].key)
			continue
		}
		if !strings.HasPrefix(rep.text, a.content) {
			r.errorf("session %s: answer %d %q is not a prefix of what was streamed (%s: %q)", s.id, a.id, a.content, rep.key, rep.text)
			continue
		}
		switch a.status {
		case "complete":
			if a.content != rep.text {
				r.errorf("session %s: complete answer %d is %q, want %q", s.id, a.id, a.content, rep.text)
			}
		case "streaming", "interrupted":
			if tr.resp != nil {
				r.errorf("session %s: answer %d of an answered turn is %s", s.id, a.id, a.status)
			}
			need := 0
			for _, d := range rounds[i].deltas {
				if !tr.killAt.IsZero() && d.at.Before(tr.killAt.Add(-r.window-crashSlack)) {
					need += len(d.text)
				}
			}
			if len(a.content) < need {
				r.errorf("session %s: interrupted answer %d kept %d bytes, but %d were streamed more than %v+%v before the kill (%s)",
					s.id, a.id, len(a.content), need, r.window, crashSlack, rep.key)
			}
			if !tr.counted {
				r.stats["interrupted answers"]++
				if need > 0 {
					r.stats["interrupted answers with a checkpoint due"]++
				}
				// How long before the kill the editor had the first text
				// the saved answer lacks: the checkpoint's actual lag.
				n := 0
				for _, d := range rounds[i].deltas {
					n += len(d.text)
					if n > len(a.content) {
						if lag := tr.killAt.Sub(d.at); lag > r.maxLag {
							r.maxLag = lag
						}
						break
					}
				}
			}
		}
	}
	tr.counted = true
	if tr.resp != nil && tr.resp.Error == nil {
		var res api.ChatResult
		json.Unmarshal(tr.resp.Result, &res)
		if len(answers) == 0 || res.MessageID != answers[len(answers)-1].id && !strings.Contains(res.Text, "[stopped:") {
			r.errorf("session %s, turn %q: answered with message %d, stored %v", s.id, tr.msg, res.MessageID, answers)
		}
		var all strings.Builder
		for _, a := range answers {
			all.WriteString(a.content)
		}
		text, _, _ := strings.Cut(res.Text, "\n\n[stopped:") // the tool-round limit note
		if text != all.String() || res.FinishReason != chat.FinishStop {
			r.errorf("session %s, turn %q: answered %q (%s), stored %q", s.id, tr.msg, res.Text, res.FinishReason, all.String())
		}
	}
}

// verify checks the daemon serves: a command, then chat turns (first in
// sessions an earlier kill left an answer "streaming" in), after which
// nothing in those sessions is "streaming" any more.
func (r *crashRun) verify(it *iter, maxTurns int) {
	var list api.SessionListResult
	m, _ := it.command("session.list", api.SessionList, map[string]any{"limit": 500})
	if m == nil || m.Error != nil {
		r.errorf("session.list: %v", m)
		return
	}
	json.Unmarshal(m.Result, &list)
	// A session is listed once it holds something.
	empty, err := r.db.emptySessions(r)
	if err != nil {
		r.errorf("reading the empty sessions: %v", err)
	}
	r.mu.Lock()
	want := 0
	for _, s := range r.sessions {
		if !slices.Contains(empty, s.id) {
			want++
		}
	}
	r.mu.Unlock()
	if len(list.Sessions) != want {
		r.errorf("session.list lists %d sessions, want %d (%d sessions, %d of them empty)", len(list.Sessions), want, len(r.sessions), len(empty))
	}
	var streaming []string
	rows, err := r.db.query("SELECT DISTINCT session_id FROM messages WHERE status = 'streaming' ORDER BY session_id")
	if err != nil {
		r.errorf("reading streaming answers: %v", err)
	}
	for _, x := range rows {
		streaming = append(streaming, str(x, "session_id"))
	}
	rng := r.rng(it.n, 100)
	r.mu.Lock()
	var targets []*sessModel
	for _, id := range streaming {
		if s := r.byID[id]; s != nil && len(targets) < maxTurns {
			targets = append(targets, s)
		}
	}
	if len(targets) == 0 && len(r.sessions) > 0 {
		targets = append(targets, r.sessions[rng.IntN(len(r.sessions))])
	}
	r.mu.Unlock()
	if len(targets) == 0 {
		r.opNewSession(it, rng)
		r.mu.Lock()
		targets = append(targets, r.sessions[0])
		r.mu.Unlock()
	}
	for _, s := range targets {
		r.mu.Lock()
		s.busy["chat"] = true
		r.mu.Unlock()
		tr := r.opChat(it, rng, s, true)
		r.release(s, "chat")
		if tr.resp == nil || tr.resp.Error != nil {
			r.errorf("verification turn in session %s failed: %v", s.id, tr.resp)
			return
		}
		var res api.ChatResult
		json.Unmarshal(tr.resp.Result, &res)
		if k := keyOf(res.Text); k == "" || r.replies[k] == nil || res.Text != r.replies[k].text || res.FinishReason != chat.FinishStop {
			r.errorf("verification turn answered %q (%s)", res.Text, res.FinishReason)
		}
		var show api.ShowResult
		if err := it.s.Command(api.SessionShow, map[string]any{"sessionId": s.id}, &show); err != nil {
			r.errorf("session.show: %v", err)
			return
		}
		for _, msg := range show.Messages {
			if msg.Status == "streaming" {
				r.errorf("session %s: message %d still \"streaming\" after the next turn", s.id, msg.ID)
			}
		}
		if slices.Contains(streaming, s.id) {
			r.stat("streaming answers marked interrupted by the next turn", 1)
		}
		r.stat("verification turns", 1)
	}
}

// final starts one more daemon after the last kill, checks the state,
// runs a turn in every session a kill left "streaming", and shuts down.
func (r *crashRun) final() {
	r.mu.Lock()
	r.iter = -1 // no turn of the final daemon is checked against a kill
	r.mu.Unlock()
	it := r.startDaemon(-1)
	if !it.initialize() {
		r.t.Fatalf("the final daemon did not initialize")
	}
	r.checkState(it)
	r.verify(it, 1000)
	it.s.Shutdown()
	if code := it.s.Exit(); code != 0 {
		r.errorf("the final daemon exited %d", code)
	}
}

func (r *crashRun) summary() {
	var phases []string
	for p := range r.phases {
		phases = append(phases, p)
	}
	sort.Strings(phases)
	var b strings.Builder
	fmt.Fprintf(&b, "%d kills (seed %d); delays after the start of work: median %v, max %v\n", len(r.delays), r.seed, median(r.delays), slices.Max(r.delays))
	b.WriteString("phases hit at the kill (a kill can hit several):\n")
	for _, p := range phases {
		fmt.Fprintf(&b, "  %-40s %d\n", p, r.phases[p])
	}
	var stats []string
	for s := range r.stats {
		stats = append(stats, s)
	}
	sort.Strings(stats)
	for _, s := range stats {
		fmt.Fprintf(&b, "  %-40s %d\n", s, r.stats[s])
	}
	fmt.Fprintf(&b, "  %-40s %d\n", "sessions", len(r.sessions))
	fmt.Fprintf(&b, "  %-40s %v (allowed %v + %v)\n", "longest unsaved text at a kill", r.maxLag.Round(time.Millisecond), r.window, crashSlack)
	r.t.Log(b.String())
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestRequestParamsOutliveTheNextFrame: a request's params stay intact while
// its handler runs even though the read loop goes on reading the next frames
// into the same buffer. The crash test found files.add of a multi-MB file failing
// with "invalid character '}' after top-level value": the handler kept the
// params slice taken before jsonrpc2.Async, which points into the reused
// frame buffer, not the copy Async makes.
func TestRequestParamsOutliveTheNextFrame(t *testing.T) {
	parallel(t, waitTests)
	s := lsptest.InProcess(t, service.Config{DataDir: t.TempDir(), Version: "test"})
	s.Initialize(lsptest.InitOptions{})
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "params"}, &created)
	for round := range 2 {
		data := bytes.Repeat([]byte(fmt.Sprintf("round %d ", round)), (1<<20)/8)
		big := s.Async("workspace/executeCommand", map[string]any{"command": api.FilesAdd, "arguments": []any{
			map[string]any{"sessionId": created.Session.ID, "name": "big.bin", "contentBase64": base64.StdEncoding.EncodeToString(data)}}})
		// Frames right behind it land in the read buffer while the
		// files.add handler decodes its params.
		var small []<-chan *lsptest.Message
		for i := range 5 {
			small = append(small, s.Async("workspace/executeCommand", map[string]any{"command": api.ContextSet, "arguments": []any{
				map[string]any{"sessionId": created.Session.ID, "setName": "ports", "items": []string{fmt.Sprint(round*100 + i)}}}}))
		}
		if m := <-big; m == nil || m.Error != nil {
			t.Fatalf("round %d: files.add: %+v", round, m)
		}
		for i, ch := range small {
			if m := <-ch; m == nil || m.Error != nil {
				t.Fatalf("round %d: context.set %d: %+v", round, i, m)
			}
		}
		got, err := os.ReadFile(filepath.Join(created.Session.Folder, "sources", "big.bin"))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round %d: stored file differs from the one sent (%d bytes, %v)", round, len(got), err)
		}
	}
}
