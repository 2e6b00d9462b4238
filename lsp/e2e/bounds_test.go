package e2e_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// The resource-bound tests drive the built binary over real stdio and read
// its peak resident memory (VmHWM) from /proc. The bounds they assert are
// stated as the memory a case may add on top of the daemon's resident size
// right after initialize (about 30 MB).

const mib = 1 << 20

// procMem returns a process's peak and current resident memory in bytes.
func procMem(t testing.TB, pid int) (hwm, rss int64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the daemon's memory: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), ":")
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmHWM":
			hwm = kb << 10
		case "VmRSS":
			rss = kb << 10
		}
	}
	if hwm == 0 {
		t.Fatal("no VmHWM in /proc/PID/status")
	}
	return hwm, rss
}

// startBounded starts the binary with a workspace and returns it with its
// peak memory after initialize. The test runs in parallel with the other
// load tests (each reads its own daemon's memory).
func startBounded(t *testing.T, env []string, init map[string]any) (*lsptest.Server, string, int64) {
	t.Helper()
	if testing.Short() {
		t.Skip("moves hundreds of MB through the daemon")
	}
	parallel(t, loadTests)
	root, rootURI := workspace(t)
	s := lsptest.Binary(t, env, "serve", "--data-dir", t.TempDir())
	// Encoding and decoding hundreds of MB in this (race-instrumented)
	// test process takes minutes on a loaded 2-core machine; the daemon
	// itself is built without -race.
	s.SetTimeout(5 * time.Minute)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: init})
	if s.Pid == 0 {
		t.Fatal("no pid")
	}
	s.MustCommand(api.ContextCandids, map[string]any{}, nil) // initialized is processed
	base, _ := procMem(t, s.Pid)
	return s, root, base
}

// checkPeak asserts the daemon's peak memory grew by less than allowed over
// base, and logs it.
func checkPeak(t *testing.T, s *lsptest.Server, base, allowed int64, what string) {
	t.Helper()
	hwm, rss := procMem(t, s.Pid)
	t.Logf("%s: peak %d MiB (%+d MiB over the %d MiB after initialize; allowed %d MiB), now %d MiB",
		what, hwm/mib, (hwm-base)/mib, base/mib, allowed/mib, rss/mib)
	if hwm-base > allowed {
		t.Errorf("%s: peak resident memory grew by %d MiB, over the %d MiB allowed", what, (hwm-base)/mib, allowed/mib)
	}
}

func didOpen(s *lsptest.Server, uri string, version int, text string) {
	s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "text", "version": version, "text": text}})
}

// TestBoundsTenThousandDocuments opens 10,000 small documents (10 MB of
// text): all are held, requests are still answered with the right text,
// and the daemon's peak memory grows by less than 64 MiB. Closing them
// keeps only the 200 most recent as candidates.
func TestBoundsTenThousandDocuments(t *testing.T) {
	s, root, base := startBounded(t, nil, nil)
	const n = 10_000
	text := func(i int) string {
		return fmt.Sprintf("document %d\n%s\n", i, strings.Repeat(strconv.Itoa(i%10), 1000))
	}
	uri := func(i int) string { return fmt.Sprintf("file://%s/src/pkg%d/file%d.go", root, i/100, i) }
	start := time.Now()
	for i := range n {
		didOpen(s, uri(i), 1, text(i))
	}
	var cands api.CandidatesResult
	s.MustCommand(api.ContextCandids, map[string]any{}, &cands)
	t.Logf("%d didOpen and a candidates list of %d in %v", n, len(cands.Files), time.Since(start))
	if len(cands.Files) != n {
		t.Fatalf("candidates: %d, want %d", len(cands.Files), n)
	}
	for _, i := range []int{0, 1, 4999, 7777, n - 1} {
		var doc api.DocumentGetResult
		s.MustCommand(api.DocumentGet, map[string]any{"uri": uri(i)}, &doc)
		if doc.Text != text(i) {
			t.Errorf("document %d: %q", i, doc.Text[:min(len(doc.Text), 40)])
		}
	}
	var sess api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "still serving"}, &sess)
	checkPeak(t, s, base, 64*mib, "10,000 documents open")

	for i := range n {
		s.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri(i)}})
	}
	cands = api.CandidatesResult{}
	s.MustCommand(api.ContextCandids, map[string]any{}, &cands)
	if len(cands.Files) != 200 || cands.Files[0].Open {
		t.Errorf("after closing all: %d candidates (want the 200 most recent), first %+v", len(cands.Files), cands.Files[0])
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestBoundsOpenDocumentBudget opens five 60 MB documents: two fit in the
// 128 MiB budget, the other three are refused with one warning, listed as
// open without text, and their edits are ignored; once one is closed another
// can be opened. While the documents are opened, peak memory stays under
// the budget plus four messages' worth (the read buffer, the decoded text,
// the document, and the garbage of the one before). Reading a 60 MB
// document back costs about six times its size in transient memory (the
// cached text, JSON encoding, jsonrpc2's copy): that peak is only logged
// and sanity-checked.
func TestBoundsOpenDocumentBudget(t *testing.T) {
	s, root, base := startBounded(t, nil, nil)
	const size = 60_000_000
	if 2*size > buffer.MaxOpenBytes || 3*size < buffer.MaxOpenBytes {
		t.Fatalf("the sizes no longer straddle the %d MiB budget", buffer.MaxOpenBytes/mib)
	}
	uri := func(i int) string { return fmt.Sprintf("file://%s/big%d.txt", root, i) }
	text := func(i int) string { return strings.Repeat(string(rune('a'+i)), size-1) + "\n" }
	for i := range 5 {
		didOpen(s, uri(i), 1, text(i))
	}
	var cands api.CandidatesResult
	s.MustCommand(api.ContextCandids, map[string]any{}, &cands)
	checkPeak(t, s, base, buffer.MaxOpenBytes+4*api.MaxMessageBytes, "five 60 MB didOpen")
	if len(cands.Files) != 5 {
		t.Errorf("candidates: %+v", cands.Files)
	}
	for _, c := range cands.Files {
		if !c.Open || c.Size != size {
			t.Errorf("candidate %+v", c)
		}
	}
	warn := s.WaitFor("the over-budget warning", func(m *lsptest.Message) bool {
		return m.Method == "window/showMessage" && strings.Contains(string(m.Params), "open documents are limited to 128 MiB")
	})
	if !strings.Contains(string(warn.Params), "big2.txt") {
		t.Errorf("warning: %s", warn.Params)
	}
	for i := 2; i < 5; i++ {
		err := s.Command(api.DocumentGet, map[string]any{"uri": uri(i)}, nil)
		checkRPCError(t, fmt.Sprint("document.get of refused document ", i), err, -32602, "open but its text is not held", "128 MiB")
	}
	// An edit to a refused document is ignored: it is still not held.
	s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri(2), "version": 2},
		"contentChanges": []any{map[string]any{"text": "small now"}}})
	checkRPCError(t, "document.get after an edit", s.Command(api.DocumentGet, map[string]any{"uri": uri(2)}, nil), -32602, "not held")

	// Closing one makes room for another.
	s.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri(0)}})
	didOpen(s, uri(2), 3, text(2))
	checkPeak(t, s, base, buffer.MaxOpenBytes+4*api.MaxMessageBytes, "closing one, opening another")
	for _, i := range []int{1, 2} {
		var doc api.DocumentGetResult
		s.MustCommand(api.DocumentGet, map[string]any{"uri": uri(i)}, &doc)
		if len(doc.Text) != size || doc.Text[:3] != text(i)[:3] || i == 2 && doc.Version != 3 {
			t.Errorf("document %d: %d bytes %q, version %d", i, len(doc.Text), doc.Text[:3], doc.Version)
		}
	}
	checkPeak(t, s, base, buffer.MaxOpenBytes+12*api.MaxMessageBytes, "two 60 MB documents read back")
	if n := len(s.Notifications("window/showMessage")); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestBoundsEditFlood sends 100 MB of edits as fast as the pipe takes them:
// 10,000 inserts of a 10 KB line at random places into a 1 MB document,
// each followed (in the same didChange or the next) by the delete of a
// random earlier 10 KB line once 50 are there, so the document stays under
// 1.5 MB. The text must be exact afterwards and peak memory must grow by
// less than 64 MiB.
func TestBoundsEditFlood(t *testing.T) {
	s, root, base := startBounded(t, nil, nil)
	uri := "file://" + filepath.Join(root, "flood.txt")
	lines := make([]string, 10_000)
	for i := range lines {
		lines[i] = fmt.Sprintf("%099d\n", i)
	}
	didOpen(s, uri, 1, strings.Join(lines, ""))
	rng := rand.New(rand.NewPCG(1, 2))
	version := 1
	sent, big := 0, 0
	start := time.Now()
	for i := range 10_000 {
		ins := rng.IntN(len(lines) + 1)
		line := fmt.Sprintf("edit %d ", i) + strings.Repeat(string(rune('a'+i%26)), 10_000) + "\n"
		changes := []any{map[string]any{"range": lspRange(ins, 0, ins, 0), "text": line}}
		lines = slices.Insert(lines, ins, line)
		sent += len(line)
		if big++; big > 50 {
			// Delete a random big line other than the one just inserted.
			var bigLines []int
			for j, l := range lines {
				if len(l) > 200 && j != ins {
					bigLines = append(bigLines, j)
				}
			}
			del := bigLines[rng.IntN(len(bigLines))]
			changes = append(changes, map[string]any{"range": lspRange(del, 0, del+1, 0), "text": ""})
			lines = slices.Delete(lines, del, del+1)
			big--
		}
		if i%2 == 0 || len(changes) == 1 {
			version++
			s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version}, "contentChanges": changes})
			continue
		}
		for _, c := range changes {
			version++
			s.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version}, "contentChanges": []any{c}})
		}
	}
	var doc api.DocumentGetResult
	s.MustCommand(api.DocumentGet, map[string]any{"uri": uri}, &doc)
	elapsed := time.Since(start)
	t.Logf("%d MB of edits in %d didChange applied in %v (%.0f MB/s); the document is %d KB", sent/1e6, version-1, elapsed, float64(sent)/1e6/elapsed.Seconds(), len(doc.Text)>>10)
	if want := strings.Join(lines, ""); doc.Text != want || doc.Version != int32(version) {
		t.Errorf("after the flood: %d bytes version %d, want %d bytes version %d (equal text: %v)", len(doc.Text), doc.Version, len(want), version, doc.Text == want)
	}
	if sent < 100e6 || len(doc.Text) > 1600_000 {
		t.Fatalf("sent %d bytes; the document is %d bytes", sent, len(doc.Text))
	}
	checkPeak(t, s, base, 64*mib, "100 MB of edits")
	s.Shutdown()
	if code := s.Exit(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

func lspRange(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]any{"line": l1, "character": c1}, "end": map[string]any{"line": l2, "character": c2}}
}

// TestBoundsClientNotReading: an editor that stops reading the daemon's
// output while it has a lot to say. (1) 3,000 requests each answered with
// 500 candidates (~100 KB, 300 MB in all): the daemon stops reading once 64
// are pending, so the editor's writes block, and its memory stays bounded;
// once the editor reads again every request is answered. (2) A chat turn
// streaming 4 MB: the turn waits, and completes exactly once the editor
// reads again. (3) An exit sent while the daemon is blocked is taken once
// the editor reads again. Peak memory grows by less than 128 MiB in all
// (the chat turn loads the token counter's tables).
func TestBoundsClientNotReading(t *testing.T) {
	fake := openaitest.New(t)
	s, root, base := startBounded(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 16000, "maxOutputTokens": 1000},
	})
	for i := range 500 {
		didOpen(s, fmt.Sprintf("file://%s/src/a/rather/long/path/to/make/the/answer/bigger/file%04d.go", root, i), 1, "package a\n")
	}
	var one api.CandidatesResult
	s.MustCommand(api.ContextCandids, map[string]any{}, &one)
	if len(one.Files) != 500 {
		t.Fatalf("candidates: %d", len(one.Files))
	}

	// (1) Many requests, nobody reading.
	const n = 3000
	start := time.Now()
	resume := s.PauseReading()
	var sent atomic.Int64
	answers := make(chan (<-chan *lsptest.Message), n)
	go func() {
		for range n {
			answers <- s.Async("workspace/executeCommand", map[string]any{"command": api.ContextCandids, "arguments": []any{map[string]any{}}})
			sent.Add(1)
		}
	}()
	waitStalled(t, &sent, n)
	stalledAt := sent.Load()
	t.Logf("the editor's writes blocked after %d of %d requests", stalledAt, n)
	if stalledAt >= n {
		t.Errorf("the daemon read all %d requests while nobody read its answers", n)
	}
	checkPeak(t, s, base, 128*mib, "3,000 requests, output not read")
	resume()
	for i := range n {
		var m *lsptest.Message
		select {
		case ch := <-answers:
			m = <-ch
		case <-time.After(s.Timeout()):
			t.Fatalf("only %d of %d requests answered after reading resumed", i, n)
		}
		if m == nil || m.Error != nil || len(m.Result) < 50_000 {
			t.Fatalf("answer %d: %+v", i, m)
		}
	}
	t.Logf("%d requests answered in %v", n, time.Since(start))
	checkPeak(t, s, base, 128*mib, "3,000 answers read")

	// (2) A chat turn streaming 4 MB, nobody reading.
	const answerBytes = 4 << 20
	fake.Enqueue(openaitest.HugeReply(answerBytes), openaitest.Reply{Chunks: []string{"A title"}})
	resume = s.PauseReading()
	turn := s.Async("ctxls/chat", map[string]any{"message": "say a lot", "workDoneToken": "flood"})
	time.Sleep(3 * time.Second)
	checkPeak(t, s, base, 128*mib, "a 4 MB chat turn, output not read")
	resume()
	var m *lsptest.Message
	select {
	case m = <-turn:
	case <-time.After(60 * time.Second):
		t.Fatal("the chat turn did not end after reading resumed")
	}
	var res api.ChatResult
	if m == nil || m.Error != nil {
		t.Fatalf("chat: %+v", m)
	}
	mustUnmarshal(t, m.Result, &res)
	deltas, kinds, end := progressFor(s, `"flood"`)
	if len(res.Text) != answerBytes || res.FinishReason != "stop" || deltas != res.Text || end != "done" || kinds[0] != "begin" {
		t.Errorf("chat: %d bytes, %q, deltas %d bytes, end %q", len(res.Text), res.FinishReason, len(deltas), end)
	}
	checkPeak(t, s, base, 128*mib, "the 4 MB chat turn read")

	// (3) exit while the daemon is blocked on its output.
	resume = s.PauseReading()
	sent.Store(0)
	go func() {
		for range 1000 {
			s.Async("workspace/executeCommand", map[string]any{"command": api.ContextCandids, "arguments": []any{map[string]any{}}})
			sent.Add(1)
		}
		s.Notify("exit", nil)
		sent.Add(1)
	}()
	waitStalled(t, &sent, 1001)
	resume()
	if code := s.Exit(); code != 1 {
		t.Errorf("exit without shutdown: code %d, want 1", code)
	}
}

// waitStalled waits until count has not moved for a second (or reached
// n), up to 20 s.
func waitStalled(t *testing.T, count *atomic.Int64, n int64) {
	t.Helper()
	last, since := count.Load(), time.Now()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		c := count.Load()
		if c >= n {
			return
		}
		if c != last {
			last, since = c, time.Now()
		} else if time.Since(since) > time.Second {
			return
		}
	}
}
