package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// FuzzCommandArguments feeds arbitrary argument bytes to every command of a
// server with a real store. No input may panic or produce an internal error:
// bad input is the caller's mistake and must be answered -32602.
func FuzzCommandArguments(f *testing.F) {
	for i, c := range api.Commands {
		f.Add(uint8(i), []byte(c.ExampleArgs))
	}
	for _, seed := range []string{`{}`, `null`, `[]`, `"x"`, `{"sessionId":1}`, `{"items":[1,2]}`, `{"setName":"files","items":["../../etc/passwd"]}`,
		`{"name":"..","contentBase64":"eA=="}`, `{"limit":-1}`, `{"cursor":"\u0000"}`, `{"title":"\ud800"}`, `{"uri":"file:///%zz"}`, `{"a":1,"a":2}`} {
		f.Add(uint8(0), []byte(seed))
		f.Add(uint8(8), []byte(seed))
	}
	s := NewServer(service.Config{DataDir: f.TempDir(), Version: "fuzz"})
	ctx := context.Background()
	root := f.TempDir()
	if _, err := s.initialize(ctx, json.RawMessage(`{"rootUri":"file://`+root+`","capabilities":{}}`)); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.svc.Close() })
	f.Fuzz(func(t *testing.T, which uint8, arg []byte) {
		c := api.Commands[int(which)%len(api.Commands)]
		if c.ID == api.SessionDelete || c.ID == api.Chat || c.ID == api.RegenerateTitle || c.ID == api.SessionCompact || c.ID == api.MCPList || c.ID == api.ModelsList ||
			c.ID == api.FilesAdd && strings.Contains(string(arg), "path") {
			// Keep the fuzzer from calling a model provider, deleting the store it
			// writes to or copying large system files.
			return
		}
		params, err := json.Marshal(map[string]any{"command": c.ID, "arguments": []json.RawMessage{normalizeJSON(arg)}})
		if err != nil {
			return
		}
		_, err = s.executeCommand(ctx, params)
		if err == nil {
			return
		}
		rpcErr := toRPCError(ctx, err)
		if rpcErr.Code != jsonrpc2.InvalidParams || rpcErr.Message == "" {
			t.Fatalf("%s %q: got code %d %q, want -32602 with a message", c.ID, arg, rpcErr.Code, rpcErr.Message)
		}
	})
}

// normalizeJSON turns arbitrary bytes into something json.Marshal accepts as
// a RawMessage: valid JSON stays, anything else becomes a JSON string.
func normalizeJSON(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}

// FuzzFraming feeds arbitrary bytes to the frame reader: it must never
// panic, never return a frame checkFrame or jsonrpc2 rejects, never hold a
// body over the limit (its only body buffer stays within it), and stop at
// the end of the input. Everything it writes back is a well-formed frame.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}   "))
	f.Add([]byte("Content-Length: 999999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: -1\r\n\r\nxx\r\n\r\nContent-Length: 3\r\n\r\n[1]"))
	f.Add([]byte("garbage\r\n\r\nContent-Length: 5\r\n\r\nnull!"))
	f.Add([]byte("Content-Length: 1100\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"t\":\"" + strings.Repeat("x\\\"", 300) + "\"},\"id\":\"after\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		st := newStream(bytes.NewReader(data), &out, nil, slog.New(slog.DiscardHandler))
		st.limit = 1 << 10
		for range 1000 {
			body, _, err := st.ReadFrame(context.Background())
			if cap(st.rbuf) > st.limit {
				t.Fatalf("a body buffer of %d bytes for a limit of %d", cap(st.rbuf), st.limit)
			}
			if err != nil {
				break
			}
			if _, _, _, ok := checkFrame(body); !ok {
				t.Fatalf("ReadFrame returned a frame checkFrame rejects: %q", body)
			}
			if _, err := jsonrpc2.DecodeMessage(body); err != nil {
				t.Fatalf("ReadFrame returned a frame jsonrpc2 rejects (%v): %q", err, body)
			}
			st.pending.leave() // as if answered
		}
		// The answers to bad frames are frames of valid JSON-RPC.
		rd := newStream(&out, io.Discard, nil, slog.New(slog.DiscardHandler))
		for {
			body, _, err := rd.readBody(context.Background())
			if err != nil {
				if err != io.EOF {
					t.Fatalf("the stream wrote a broken frame: %v in %q", err, out.String())
				}
				break
			}
			if !json.Valid(body) {
				t.Fatalf("the stream wrote invalid JSON: %q", body)
			}
			if _, err := jsonrpc2.DecodeMessage(body); err != nil {
				t.Fatalf("the stream wrote a message jsonrpc2 rejects: %q", body)
			}
		}
	})
}

// hugeBody yields a header declaring n bytes, then n bytes of a
// request body with its id at the end, generated on the fly.
type hugeBody struct {
	head, tail []byte
	n          int64 // filler bytes still to produce
}

// fillerX is what hugeBody reads as filler, a piece at a time.
var fillerX = bytes.Repeat([]byte("x"), 1<<20)

func (h *hugeBody) Read(p []byte) (int, error) {
	switch {
	case len(h.head) > 0:
		k := copy(p, h.head)
		h.head = h.head[k:]
		return k, nil
	case h.n > 0:
		// copy, not a loop over the bytes: under -race each byte written
		// in a loop costs a race-detector call.
		k := copy(p[:min(int64(len(p)), h.n)], fillerX)
		h.n -= int64(k)
		return k, nil
	case len(h.tail) > 0:
		k := copy(p, h.tail)
		h.tail = h.tail[k:]
		return k, nil
	}
	return 0, io.EOF
}

// TestOversizeFrameNotAllocated: a 128 MiB request, twice the 64 MiB
// limit, is read past with under 1 MiB allocated, and answered -32600 with
// its id, which comes after the body; a normal frame behind it is read.
// (It was 1 GiB: the skimmer's look at every byte took 9 s under -race, and
// a body held whole would show as 128 MiB allocated all the same.)
func TestOversizeFrameNotAllocated(t *testing.T) {
	const filler = 1 << 27
	prefix := `{"jsonrpc":"2.0","method":"workspace/executeCommand","params":{"text":"`
	suffix := `"},"id":"late-id"}`
	next := `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	h := &hugeBody{
		head: []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(prefix)+filler+len(suffix), prefix)),
		n:    filler,
		tail: []byte(suffix + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(next), next)),
	}
	var out bytes.Buffer
	st := newStream(h, &out, nil, slog.New(slog.DiscardHandler))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	body, _, err := st.ReadFrame(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil || string(body) != next {
		t.Fatalf("the frame after the huge one: %q %v", body, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("skipping a 1 GiB body allocated %d bytes", alloc)
	}
	rd := newStream(&out, io.Discard, nil, slog.New(slog.DiscardHandler))
	answer, _, err := rd.readBody(context.Background())
	var m struct {
		ID    string
		Error struct {
			Code    int
			Message string
		}
	}
	if err != nil || json.Unmarshal(answer, &m) != nil {
		t.Fatalf("answer %q: %v", out.String(), err)
	}
	wantMsg := fmt.Sprintf("workspace/executeCommand message of %d bytes exceeds the limit of 67108864 bytes", len(prefix)+filler+len(suffix))
	if m.ID != "late-id" || m.Error.Code != -32600 || m.Error.Message != wantMsg {
		t.Errorf("answer %s, want id late-id, -32600 %q", answer, wantMsg)
	}
}

// fuzzPeer is a minimal editor for the fuzz targets: it writes frames to a
// server running in process over pipes, reads every frame the server sends,
// answers the server's own requests with null, and hands everything else to
// the fuzz function. One server serves a whole fuzzing process.
type fuzzPeer struct {
	w    io.Writer
	wmu  sync.Mutex
	msgs chan fuzzMsg
	seq  atomic.Int64
	done chan struct{} // closed when the server's output ends
}

type fuzzMsg struct {
	raw []byte
	m   struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int64   `json:"code"`
			Message *string `json:"message"`
		} `json:"error"`
	}
}

func startFuzzPeer(f *testing.F, initParams string) *fuzzPeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := NewServer(service.Config{DataDir: f.TempDir(), Version: "fuzz"})
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	go func() {
		s.Run(ctx, inR, outW)
		outW.Close()
		close(exited)
	}()
	p := &fuzzPeer{w: inW, msgs: make(chan fuzzMsg, 1024), done: make(chan struct{})}
	go p.read(outR)
	f.Cleanup(func() {
		cancel()
		inW.Close()
		<-exited
	})
	p.write([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":` + initParams + `}`))
	for {
		select {
		case m := <-p.msgs:
			if string(m.m.ID) == `"init"` {
				if m.m.Error != nil {
					f.Fatalf("initialize: %s", m.raw)
				}
				p.write([]byte(`{"jsonrpc":"2.0","method":"initialized","params":{}}`))
				return p
			}
		case <-time.After(10 * time.Second):
			f.Fatal("no answer to initialize")
		}
	}
}

func (p *fuzzPeer) write(body []byte) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	fmt.Fprintf(p.w, "Content-Length: %d\r\n\r\n", len(body))
	p.w.Write(body)
}

func (p *fuzzPeer) read(r io.Reader) {
	defer close(p.done)
	st := newStream(r, io.Discard, nil, slog.New(slog.DiscardHandler))
	for {
		body, _, err := st.readBody(context.Background())
		if err != nil {
			return
		}
		var m fuzzMsg
		m.raw = append([]byte(nil), body...)
		if err := json.Unmarshal(body, &m.m); err == nil && m.m.Method != nil && len(m.m.ID) > 0 {
			// A request from the server: answer it like an editor would.
			p.write([]byte(`{"jsonrpc":"2.0","id":` + string(m.m.ID) + `,"result":null}`))
			continue
		}
		p.msgs <- m
	}
}

// idKey renders a JSON-RPC id the way the server's answer must carry it:
// an integer literal that fits int64 or a string. ok is false for anything
// else (a fraction, a huge number, an object: the message is invalid and
// may be answered with a null id).
func fuzzIDKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatInt(n, 10), true
}

// fuzzDenied are strings that, anywhere in a message, make the JSON-RPC fuzz
// skip it: ending the connection (exit, shutdown) is allowed behaviour for
// them, and chat turns, provider settings, deleting sessions and copying
// files by path reach outside the test.
var fuzzDenied = []string{"exit", "shutdown", "Configuration", "chat", "delete", "regenerate", "path"}

// fuzzSkip reports whether a body contains a denied string in any of its
// JSON string tokens (keys and values, duplicates included, escapes decoded).
func fuzzSkip(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok {
			for _, d := range fuzzDenied {
				if strings.Contains(s, d) {
					return true
				}
			}
		}
	}
}

// expectAnswer returns the ids a conforming server may answer body with
// (exactly one answer is due): a JSON object carrying a usable id, unless it
// is shaped like a response (no method, a result or error), which must never
// be answered. With the "id" key repeated, any of its usable values counts.
func expectAnswer(body []byte) map[string]bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	_, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	if !hasMethod && (hasResult || hasError) {
		return nil
	}
	want := map[string]bool{}
	for _, raw := range topLevelValues(body, "id") {
		if key, ok := fuzzIDKey(raw); ok {
			want[key] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	return want
}

// topLevelValues returns every value of a top-level key, repeats included.
func topLevelValues(body []byte, key string) []json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		if tok == key {
			out = append(out, v)
		}
	}
	return out
}

// FuzzJSONRPC sends arbitrary bodies in well-formed frames through the real
// read loop and dispatch of one long-lived server. Whatever the body, the
// server must not crash or close the connection; a body that carries a
// usable id and is not a response gets exactly an answer with that id; every
// message the server writes is a well-formed JSON-RPC message (errors with a
// non-zero code and a message); and a normal request sent right after is
// answered with a result.
func FuzzJSONRPC(f *testing.F) {
	for _, c := range api.Commands {
		f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":{"command":"` + c.ID + `","arguments":[` + c.ExampleArgs + `]}}`))
	}
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":"s","method":"nope"}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.go","languageId":"go","version":1,"text":"x\ny"}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.go","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":1},"end":{"line":9,"character":0}},"text":"z"}]}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"x","result":1}`,
		`{"jsonrpc":"2.0","id":4,"result":null}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":6,"id":7,"method":"workspace/executeCommand"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x"}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"1.0","id":8,"method":"x"}`,
		`{"jsonrpc":"2.0","id":9,"method":"workspace/executeCommand","params":"str"}`,
		`{"jsonrpc":"2.0","id":10,"method":"workspace/executeCommand","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":11,"method":7}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`,
		`{"jsonrpc":"2.0","id":12,"method":"workspace/executeCommand","params":{"command":"ctxls.document.get","arguments":[{"uri":"file:///a.go"}]}} `,
		`[{"jsonrpc":"2.0","id":13,"method":"x"}]`, `[]`, `{}`, `null`, `"str"`, `{"a":`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	p := startFuzzPeer(f, `{"rootUri":"file://`+f.TempDir()+`","capabilities":{}}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		if fuzzSkip(body) {
			return
		}
		want := expectAnswer(body)
		wantAnswer := want != nil
		sentinel := fmt.Sprintf("sentinel-%d-%d", os.Getpid(), p.seq.Add(1))
		p.write(body)
		p.write([]byte(`{"jsonrpc":"2.0","id":"` + sentinel + `","method":"workspace/executeCommand","params":{"command":"ctxls.context.candidates"}}`))
		gotAnswer, gotSentinel := false, false
		deadline := time.After(30 * time.Second) // the machine may be loaded
		for !gotSentinel || wantAnswer && !gotAnswer {
			var m fuzzMsg
			select {
			case m = <-p.msgs:
			case <-p.done:
				t.Fatalf("the server closed the connection after %q", body)
			case <-deadline:
				t.Fatalf("no answer within 30s after %q (sentinel %v, answer %v/%v)", body, gotSentinel, wantAnswer, gotAnswer)
			}
			if m.m.JSONRPC != "2.0" {
				t.Fatalf("after %q the server sent a message without jsonrpc 2.0: %s", body, m.raw)
			}
			if m.m.Method != nil {
				continue // a notification
			}
			if (m.m.Error == nil) == (len(m.m.Result) == 0) {
				t.Fatalf("after %q: a response needs exactly one of result and error: %s", body, m.raw)
			}
			if m.m.Error != nil && (m.m.Error.Code == 0 || m.m.Error.Message == nil || *m.m.Error.Message == "") {
				t.Fatalf("after %q: error without a code or message: %s", body, m.raw)
			}
			key, ok := fuzzIDKey(m.m.ID)
			switch {
			case key == "s"+sentinel:
				if m.m.Error != nil {
					t.Fatalf("after %q the sentinel request failed: %s", body, m.raw)
				}
				gotSentinel = true
			case ok && want[key]:
				if gotAnswer {
					t.Fatalf("%q answered twice: %s", body, m.raw)
				}
				gotAnswer = true
			case string(m.m.ID) == "null" && m.m.Error != nil:
				// An invalid message whose id could not be used.
			default:
				t.Fatalf("after %q: unexpected response %s (want an answer to %v)", body, m.raw, want)
			}
		}
	})
}

// editRef is a deliberately naive model of LSP edits (after
// buffer/reference_test.go): split into lines, walk code points, splice.
func editRefOffset(text string, line, char uint32, utf8Units bool) int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	if int64(line) >= int64(len(starts)) {
		return len(text)
	}
	off := starts[line]
	units := int64(0)
	for off < len(text) && text[off] != '\n' && text[off] != '\r' {
		r, size := utf8.DecodeRuneInString(text[off:])
		u := int64(size)
		if !utf8Units {
			u = int64(utf16.RuneLen(r))
		}
		if units+u > int64(char) {
			break
		}
		units += u
		off += size
	}
	return off
}

var editPieces = []string{"", "a", "\n", "\r\n", "\r", "é", "😀", "\r\nx\r", "ab\ncd", "\u2028", "\t"}

// editPos turns a fuzz byte into a position coordinate: mostly small, near
// the uint32 maximum for the top values.
func editPos(b byte) uint32 {
	if b >= 240 {
		return math.MaxUint32 - uint32(255-b)
	}
	return uint32(b % 10)
}

// FuzzEdits drives didOpen, didChange (ranged and whole, several changes per
// notification, ranges past the ends and inverted), didSave and didClose
// through the server's notification handler, in both negotiated encodings,
// and checks ctxls.document.get against a naive reference after every step:
// the text, the version, and "not open" after a close.
func FuzzEdits(f *testing.F) {
	f.Add(false, "héllo\r\nwörld 😀\rx\n", []byte{0, 1, 0, 3, 2, 6, 11, 0, 1, 1, 2, 3, 13, 0, 0, 0, 0, 2}, "ins")
	f.Add(true, "héllo\r\nwörld 😀\rx\n", []byte{0, 1, 1, 1, 3, 5, 5, 0, 2, 0, 1, 1, 15, 3, 0, 0, 0, 0}, "😀\r")
	f.Add(false, "", []byte{0, 250, 250, 255, 255, 1, 1, 2, 0, 1, 0, 7}, "")
	f.Add(true, "a\r\nb", []byte{0, 0, 1, 0, 2, 3, 14, 0, 0, 0, 0, 0, 0, 1, 0, 0, 9, 200}, "x\ny")
	servers := map[bool]*Server{}
	for _, utf8Enc := range []bool{false, true} {
		s := NewServer(service.Config{DataDir: f.TempDir(), Version: "fuzz"})
		caps := `{}`
		if utf8Enc {
			caps = `{"general":{"positionEncodings":["utf-8","utf-16"]}}`
		}
		if _, err := s.initialize(context.Background(), json.RawMessage(`{"capabilities":`+caps+`}`)); err != nil {
			f.Fatal(err)
		}
		s.state = initialized
		f.Cleanup(func() { s.svc.Close() })
		servers[utf8Enc] = s
	}
	var seq atomic.Int64
	f.Fuzz(func(t *testing.T, utf8Enc bool, text string, ops []byte, insert string) {
		s := servers[utf8Enc]
		ctx := context.Background()
		uri := fmt.Sprintf("file:///fuzz/%d/doc.txt", seq.Add(1))
		// The server sees text after JSON encoding, which replaces invalid
		// UTF-8: the model starts from the same text.
		roundTrip := func(v string) string {
			b, _ := json.Marshal(v)
			var out string
			json.Unmarshal(b, &out)
			return out
		}
		model := roundTrip(text)
		insert = roundTrip(insert)
		version := int32(1)
		open := true
		notify := func(method string, params any) {
			raw, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			s.handleNotification(ctx, method, raw)
		}
		openDoc := func() {
			notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "plaintext", "version": version, "text": model}})
		}
		openDoc()
		defer notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
		for step := 0; len(ops) >= 6; step++ {
			op := ops[:6]
			ops = ops[6:]
			piece := editPieces[int(op[5])%len(editPieces)]
			if op[5] >= 128 && insert != "" {
				piece = insert[:int(op[5])%len(insert)+1]
				piece = roundTrip(piece) // a cut may split a character
			}
			switch kind := op[0] % 16; {
			case kind <= 13:
				type change struct {
					r    *[4]uint32
					text string
				}
				changes := []change{{&[4]uint32{editPos(op[1]), editPos(op[2]), editPos(op[3]), editPos(op[4])}, piece}}
				if kind >= 11 && kind <= 12 {
					changes = append(changes, change{&[4]uint32{editPos(op[3]), editPos(op[4]), editPos(op[1] + 1), editPos(op[2])}, insert})
				}
				if kind == 13 {
					changes = []change{{nil, piece + insert}}
				}
				var wire []any
				next, failed := model, false
				for _, c := range changes {
					if c.r == nil {
						wire = append(wire, map[string]any{"text": c.text})
						if !failed {
							next = c.text
						}
						continue
					}
					r := *c.r
					wire = append(wire, map[string]any{"range": map[string]any{
						"start": map[string]any{"line": r[0], "character": r[1]},
						"end":   map[string]any{"line": r[2], "character": r[3]}}, "text": c.text})
					if failed {
						continue
					}
					if r[0] > r[2] || r[0] == r[2] && r[1] > r[3] {
						failed = true // inverted: refused; earlier changes stay
						continue
					}
					a := editRefOffset(next, r[0], r[1], utf8Enc)
					b := editRefOffset(next, r[2], r[3], utf8Enc)
					next = next[:a] + c.text + next[b:]
				}
				newVersion := version + 1
				notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": newVersion}, "contentChanges": wire})
				model = next
				if !failed {
					version = newVersion
				}
			case kind == 14:
				notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
			default:
				notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
				open = false
				checkDoc(t, s, uri, model, version, open, step)
				version = int32(op[1])
				open = true
				openDoc()
			}
			checkDoc(t, s, uri, model, version, open, step)
		}
	})
}

// checkDoc compares ctxls.document.get with the model.
func checkDoc(t *testing.T, s *Server, uri, want string, version int32, open bool, step int) {
	t.Helper()
	params, _ := json.Marshal(map[string]any{"command": api.DocumentGet, "arguments": []any{map[string]any{"uri": uri}}})
	res, err := s.executeCommand(context.Background(), params)
	if !open {
		if rpcErr := toRPCError(context.Background(), err); err == nil || rpcErr.Code != jsonrpc2.InvalidParams || !strings.Contains(rpcErr.Message, "not open") {
			t.Fatalf("step %d: document.get of a closed document: %v", step, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("step %d: document.get: %v", step, err)
	}
	got := res.(*api.DocumentGetResult)
	if got.Text != want || got.Version != version {
		t.Fatalf("step %d: document.get = %q (version %d), want %q (version %d)", step, got.Text, got.Version, want, version)
	}
}

// FuzzJSONText: jsonText decodes every JSON string exactly as encoding/json
// does.
func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`""`, `"abc"`, `"a\nb\u00e9\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, "\"\xff\xfe\"", `"\/\\\"\b\f\r\t"`, `"é😀"`, `null`, `5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want string
		wantErr := json.Unmarshal(b, &want)
		var got jsonText
		gotErr := json.Unmarshal(b, &got)
		if (wantErr == nil) != (gotErr == nil) && string(bytes.TrimSpace(b)) != "null" {
			t.Fatalf("%q: encoding/json error %v, jsonText error %v", b, wantErr, gotErr)
		}
		if wantErr == nil && string(got) != want {
			t.Fatalf("%q: got %q, want %q", b, got, want)
		}
	})
}

// FuzzSkimmer: for any JSON object fed in pieces of any size, the skimmer
// finds the same top-level "id" and "method" as encoding/json (when neither
// is repeated and both are short enough to keep).
func FuzzSkimmer(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"id":2,"method":"x"}}`), uint8(3))
	f.Add([]byte(`{"params":["id",{"a":"\"id\""}],"method":"m\u0041","id":"x\"y"}`), uint8(1))
	f.Add([]byte(` { "id" : -7 , "result" : null } `), uint8(7))
	f.Add([]byte(`{"method":"didOpen","params":{"text":"\\"}}`), uint8(2))
	f.Add([]byte(`{"\u0069d":5,"m\u0065thod":"x"}`), uint8(4))
	f.Fuzz(func(t *testing.T, body []byte, piece uint8) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil || len(topLevelValues(body, "id")) > 1 || len(topLevelValues(body, "method")) > 1 {
			return
		}
		var sk skimmer
		n := int(piece%16) + 1
		for rest := body; len(rest) > 0; {
			k := min(n, len(rest))
			sk.feed(rest[:k])
			rest = rest[k:]
		}
		id, method, kind := sk.result()
		wantID := obj["id"]
		if len(wantID) == 0 || len(wantID) > skimMax || !validID(wantID) || isNull(wantID) {
			wantID = nil
		}
		var wantMethod string
		if raw, ok := obj["method"]; ok && len(raw) <= skimMax {
			json.Unmarshal(raw, &wantMethod)
		}
		if _, ok := obj["method"]; ok && kind != skimRequest && kind != skimNotification {
			t.Fatalf("%s: kind %v for a message with a method", body, kind)
		}
		if string(id) != string(wantID) || method != truncate(wantMethod, 100) {
			t.Fatalf("%s: got id %s method %q, want %s %q", body, id, method, wantID, wantMethod)
		}
	})
}

// TestPendingGate: the read loop's gate blocks at the limit until an answer
// is written; with one of our own requests unanswered it reads on after the
// wait; it gives up when its context ends.
func TestPendingGate(t *testing.T) {
	g := &gate{max: 2}
	ctx := context.Background()
	for range 2 {
		if ok, err := g.enter(ctx, time.Hour); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	entered := make(chan bool)
	go func() {
		ok, _ := g.enter(ctx, 10*time.Millisecond) // no call out: waits for room
		entered <- ok
	}()
	select {
	case <-entered:
		t.Fatal("entered past the limit")
	case <-time.After(100 * time.Millisecond):
	}
	g.leave()
	if ok := <-entered; !ok {
		t.Fatal("entered without room")
	}
	// A request of ours to the editor is unanswered: read on after the wait.
	g.callOut()
	start := time.Now()
	if ok, err := g.enter(ctx, 50*time.Millisecond); ok || err != nil || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("with a call out: %v %v after %v", ok, err, time.Since(start))
	}
	// A call going out while the read loop waits starts the wait.
	g.callAnswered()
	go func() {
		ok, _ := g.enter(ctx, 50*time.Millisecond)
		entered <- ok
	}()
	time.Sleep(100 * time.Millisecond)
	g.callOut()
	if ok := <-entered; ok {
		t.Fatal("entered with room?")
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	g.callAnswered()
	if _, err := g.enter(cctx, time.Hour); err == nil {
		t.Fatal("no error after the context ended")
	}
}
