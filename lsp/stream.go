package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/ctxls/ctxls/api"
)

// MaxMessageBytes is the largest message body the daemon accepts. A larger
// declared Content-Length is answered with an Invalid Request error and its
// body is skipped without being allocated. 64 MiB leaves room for a 25 MB file
// sent base64-encoded through ctxls.files.add.
const MaxMessageBytes = api.MaxMessageBytes

// pendingWait is how long the read loop waits for room when
// api.MaxPendingRequests are pending and a request of ours to the editor
// is unanswered, before it reads on anyway: a handler waiting for the
// editor's answer (to window/workDoneProgress/create) needs the read loop,
// so waiting for it forever could deadlock. Without such a request the read
// loop waits as long as it takes.
const pendingWait = 10 * time.Second

// stream is the LSP base-protocol framing (Content-Length headers) over a pair
// of byte streams. It replaces jsonrpc2's header stream because that one ends
// the connection on the first malformed frame: here a frame that is not valid
// JSON-RPC is answered with a JSON-RPC error (id null, or the frame's id when
// it has one) and reading goes on with the next frame.
//
// It implements jsonrpc2.Stream plus the ReadFrame/WriteFrame pair that
// jsonrpc2.Conn uses for its zero-copy path.
type stream struct {
	in     *bufio.Reader
	out    io.Writer
	closer io.Closer
	log    *slog.Logger
	limit  int

	// writeMu serialises writes so every frame is one contiguous write.
	writeMu sync.Mutex

	// rbuf is reused for frame bodies; it is only touched by the read loop.
	rbuf []byte

	// pending counts requests read and not yet answered: ReadFrame waits
	// for room before passing on a request, Write makes room when it writes
	// a response.
	pending gate
}

func newStream(in io.Reader, out io.Writer, closer io.Closer, log *slog.Logger) *stream {
	return &stream{in: bufio.NewReaderSize(in, 64<<10), out: out, closer: closer, log: log, limit: MaxMessageBytes,
		pending: gate{max: api.MaxPendingRequests}}
}

// Read implements jsonrpc2.Stream.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	body, n, err := s.ReadFrame(ctx)
	if err != nil {
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	return msg, n, err
}

// ReadFrame returns the body of the next well-formed JSON-RPC frame. Frames
// that are not are answered here and skipped. The returned slice is valid
// until the next call.
//
// A frame is passed on only if jsonrpc2 itself can decode it: jsonrpc2 ends
// the connection on a frame it cannot decode, and its decoder is stricter
// than encoding/json in places (a method alongside a result, for one).
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		body, n, err := s.readBody(ctx)
		if err != nil {
			return nil, 0, err
		}
		id, code, msg, ok := checkFrame(body)
		if ok {
			m, derr := jsonrpc2.DecodeMessage(body)
			if derr == nil {
				if _, resp := m.(*jsonrpc2.Response); resp {
					s.pending.callAnswered()
				}
				if _, call := m.(*jsonrpc2.Call); call {
					if ok, err := s.pending.enter(ctx, pendingWait); err != nil {
						return nil, 0, err
					} else if !ok {
						s.log.Warn("reading on with too many requests pending, to let an answer from the editor in", "limit", s.pending.max, "waited", pendingWait)
					}
				}
				return body, n, nil
			}
			code, msg = jsonrpc2.InvalidRequest, "invalid JSON-RPC message: "+derr.Error()
			if errors.Is(derr, jsonrpc2.ErrParse) {
				code = jsonrpc2.ParseError
			}
			if isResponse(body) {
				code = 0 // never answer a response
			}
		}
		if code == 0 {
			s.log.Warn("invalid response dropped", "err", msg, "body", truncate(string(body), 200))
			continue
		}
		s.log.Warn("invalid message", "err", msg)
		s.replyError(id, code, msg)
	}
}

// readBody returns the body of the next frame, answering and skipping
// frames whose header is broken or whose body is over the limit.
func (s *stream) readBody(ctx context.Context) ([]byte, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, hdr, err := s.readHeader()
		if err != nil {
			var bad badHeaderError
			if errors.As(err, &bad) {
				s.log.Warn("malformed message header", "err", err)
				s.replyError(nil, jsonrpc2.ParseError, string(bad))
				continue
			}
			return nil, 0, err
		}
		if length > s.limit {
			if err := s.skipOversize(length); err != nil {
				return nil, 0, err
			}
			continue
		}
		if cap(s.rbuf) < length || cap(s.rbuf) > 4<<20 && length < 64<<10 {
			// Grow to fit, and give a huge buffer back once messages are small again.
			s.rbuf = make([]byte, length)
		}
		body := s.rbuf[:length]
		if _, err := io.ReadFull(s.in, body); err != nil {
			return nil, 0, io.ErrUnexpectedEOF
		}
		return body, int64(hdr + length), nil
	}
}

// skipOversize reads past a body over the limit without holding it, noting
// its top-level "id" and "method" as they stream past, so that a request is
// answered with its own id (its sender would otherwise wait forever) and a
// notification is not answered at all (the user is told instead).
func (s *stream) skipOversize(length int) error {
	var sk skimmer
	if err := s.discard(length, sk.feed); err != nil {
		return err
	}
	id, method, kind := sk.result()
	s.log.Warn("message too large", "bytes", length, "limit", s.limit, "method", method, "id", string(id))
	text := fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", length, s.limit)
	if method != "" {
		text = fmt.Sprintf("%s message of %d bytes exceeds the limit of %d bytes", method, length, s.limit)
	}
	switch kind {
	case skimResponse:
		// A response to one of our calls: never answered.
	case skimNotification:
		// A notification must not be answered; the user must still learn that
		// it was dropped (a document that is too large is not tracked).
		msg := fmt.Sprintf("ctxls: a %s message of %d bytes was ignored: messages are limited to %d MiB", method, length, s.limit>>20)
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "window/showMessage",
			"params": map[string]any{"type": 2, "message": msg}})
		if _, err := s.WriteFrame(context.Background(), body); err != nil {
			s.log.Warn("cannot write message", "err", err)
		}
	default:
		s.replyError(id, jsonrpc2.InvalidRequest, text)
	}
	return nil
}

// discard reads and drops n bytes of the input, showing each piece to see
// (when not nil) without copying it.
func (s *stream) discard(n int, see func([]byte)) error {
	for n > 0 {
		buf, err := s.in.Peek(min(n, s.in.Size()))
		if len(buf) == 0 && err != nil {
			return io.ErrUnexpectedEOF
		}
		if see != nil {
			see(buf)
		}
		s.in.Discard(len(buf))
		n -= len(buf)
	}
	return nil
}

// badHeaderError is a header problem the reader can recover from by moving on
// to the next header block.
type badHeaderError string

func (e badHeaderError) Error() string { return string(e) }

// readHeader reads one header block and returns the declared body length and
// the header's size in bytes.
func (s *stream) readHeader() (length, size int, err error) {
	length = -1
	var problem string
	for {
		line, err := s.in.ReadSlice('\n')
		size += len(line)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				problem = "header line too long"
				// Drain the rest of the line.
				for errors.Is(err, bufio.ErrBufferFull) {
					_, err = s.in.ReadSlice('\n')
				}
				if err != nil {
					return 0, size, err
				}
				continue
			}
			if err == io.EOF && size > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, size, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if size <= 2 {
				// Tolerate stray blank lines between frames.
				size = 0
				continue
			}
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			problem = fmt.Sprintf("malformed header line %q", truncate(string(line), 80))
			continue
		}
		if strings.EqualFold(string(bytes.TrimSpace(name)), "Content-Length") {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil || n <= 0 {
				problem = fmt.Sprintf("invalid Content-Length %q", truncate(string(value), 40))
				continue
			}
			length = n
		}
	}
	if problem != "" {
		if length > 0 {
			// Skip the body that went with the broken header.
			if err := s.discard(length, nil); err != nil {
				return 0, size, err
			}
		}
		return 0, size, badHeaderError(problem)
	}
	if length < 0 {
		return 0, size, badHeaderError("message header has no Content-Length")
	}
	return length, size, nil
}

// frameShape is what checkFrame needs to know about a frame. The members
// that can be large are only noted, never copied.
type frameShape struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  presence        `json:"params"`
	Result  presence        `json:"result"`
	Error   presence        `json:"error"`
}

// presence records whether a JSON member was there and its first byte.
type presence struct {
	present bool
	first   byte
}

func (p *presence) UnmarshalJSON(b []byte) error {
	*p = presence{true, b[0]}
	return nil
}

// checkFrame validates a frame before jsonrpc2 sees it, because jsonrpc2
// closes the connection on a frame it cannot decode. It returns the frame's id
// (when usable) and an error code and message for a bad frame.
func checkFrame(body []byte) (id json.RawMessage, code jsonrpc2.Code, msg string, ok bool) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, jsonrpc2.InvalidRequest, "batch messages are not supported by the Language Server Protocol", false
	}
	var f frameShape
	if err := json.Unmarshal(body, &f); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			// Answer with the frame's id if it has a usable one.
			var idOnly struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(body, &idOnly) != nil || len(idOnly.ID) == 0 || !validID(idOnly.ID) || isNull(idOnly.ID) {
				idOnly.ID = nil
			}
			return idOnly.ID, jsonrpc2.InvalidRequest, fmt.Sprintf("invalid JSON-RPC message: field %q has the wrong type", typeErr.Field), false
		}
		return nil, jsonrpc2.ParseError, "parse error: " + err.Error(), false
	}
	if len(f.ID) > 0 && !validID(f.ID) {
		return nil, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: id must be an integer or a string", false
	}
	if isNull(f.ID) {
		f.ID = nil
	}
	if f.JSONRPC == nil || *f.JSONRPC != "2.0" {
		if f.Method == nil && (f.Result.present || f.Error.present) {
			return nil, 0, `invalid response: "jsonrpc" must be "2.0"`, false // never answer a response
		}
		return f.ID, jsonrpc2.InvalidRequest, `invalid JSON-RPC message: "jsonrpc" must be "2.0"`, false
	}
	if f.Method != nil {
		if *f.Method == "" {
			return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: empty method", false
		}
		if f.Result.present || f.Error.present {
			return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: a request cannot have a result or an error", false
		}
		if p := f.Params; p.present && p.first != '{' && p.first != '[' && p.first != 'n' {
			return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: params must be an object or an array", false
		}
		return f.ID, 0, "", true
	}
	if f.Result.present || f.Error.present {
		if len(f.ID) > 0 {
			return f.ID, 0, "", true // a response to one of our calls
		}
		return nil, 0, "response without an id", false // code 0: drop, never answer a response
	}
	return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: no method", false
}

// isResponse reports whether a frame checkFrame accepted is a response.
func isResponse(body []byte) bool {
	var f struct {
		Method *string `json:"method"`
	}
	return json.Unmarshal(body, &f) == nil && f.Method == nil
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func validID(raw json.RawMessage) bool {
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case 'n':
		return isNull(raw)
	default:
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
}

// replyError writes an error response for a frame that never reached jsonrpc2.
func (s *stream) replyError(id json.RawMessage, code jsonrpc2.Code, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc2.Error  `json:"error"`
	}{"2.0", id, jsonrpc2.Error{Code: code, Message: message}})
	if _, err := s.WriteFrame(context.Background(), body); err != nil {
		s.log.Warn("cannot write error response", "err", err)
	}
}

// responsePrefix starts every response jsonrpc2 encodes (calls and
// notifications start with "method").
var responsePrefix = []byte(`{"jsonrpc":"2.0","id":`)

// Write implements jsonrpc2.Stream. Every message jsonrpc2 sends goes
// through it, responses included.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, err
	}
	switch msg.(type) {
	case *jsonrpc2.Call:
		s.pending.callOut()
	case *jsonrpc2.Response:
		defer s.pending.leave()
	default:
		// jsonrpc2 passes its own unexported wire types: tell them apart by
		// their encoding.
		if bytes.HasPrefix(body, responsePrefix) {
			defer s.pending.leave()
		} else if dm, err := jsonrpc2.DecodeMessage(body); err == nil {
			if _, call := dm.(*jsonrpc2.Call); call {
				s.pending.callOut()
			}
		}
	}
	return s.WriteFrame(ctx, body)
}

// WriteFrame frames an encoded body and writes it: with one Write, or for a
// large body the header and then the body itself rather than a copy of it
// (both under writeMu, so frames never interleave).
func (s *stream) WriteFrame(ctx context.Context, body []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	const small = 64 << 10
	head := make([]byte, 0, 32+min(len(body), small))
	head = append(head, "Content-Length: "...)
	head = strconv.AppendInt(head, int64(len(body)), 10)
	head = append(head, "\r\n\r\n"...)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if len(body) <= small {
		n, err := s.out.Write(append(head, body...))
		return int64(n), err
	}
	n, err := s.out.Write(head)
	if err != nil {
		return int64(n), err
	}
	m, err := s.out.Write(body)
	return int64(n + m), err
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

// gate counts pending requests and makes the read loop wait while there
// are max of them: the editor's writes then block instead of the daemon
// growing. While a request of ours to the editor is unanswered, a handler
// may be waiting for that answer, which only the read loop can deliver: then
// the wait is cut short after a while so the two cannot deadlock.
type gate struct {
	max int

	// mu guards the fields below.
	mu      sync.Mutex
	n       int           // requests read and not yet answered
	calls   int           // our requests to the editor not yet answered
	changed chan struct{} // closed when n or calls change; nil if nobody waits
}

// enter counts one more pending request, first waiting while max are
// pending: indefinitely, or up to wait while a request of ours to the
// editor is unanswered. Past that wait it counts the request anyway and
// reports false; it fails only when ctx ends.
func (g *gate) enter(ctx context.Context, wait time.Duration) (bool, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.n >= g.max {
		switch {
		case g.calls > 0 && timer == nil:
			timer = time.NewTimer(wait)
		case g.calls == 0 && timer != nil:
			timer.Stop()
			timer = nil
		}
		var expired <-chan time.Time
		if timer != nil {
			expired = timer.C
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
			g.mu.Lock()
		case <-ctx.Done():
			g.mu.Lock()
			return false, ctx.Err()
		case <-expired:
			g.mu.Lock()
			g.n++
			return false, nil
		}
	}
	g.n++
	return true, nil
}

// leave counts one pending request answered.
func (g *gate) leave() { g.update(func() { g.n = max(g.n-1, 0) }) }

// callOut counts one request of ours to the editor.
func (g *gate) callOut() { g.update(func() { g.calls++ }) }

// callAnswered counts one answer from the editor.
func (g *gate) callAnswered() { g.update(func() { g.calls = max(g.calls-1, 0) }) }

func (g *gate) update(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f()
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// skimmer follows the top level of a JSON object as it streams past, one
// piece at a time, and keeps only its "id" and "method" members (each up to
// skimMax bytes), whatever their position: some clients put "id" after a
// huge "params". Nested values are skipped by counting brackets outside
// strings. It never fails; a body it cannot follow gives no id.
type skimmer struct {
	phase      skimPhase
	depth      int  // brackets open inside the current value
	inStr, esc bool // inside a string, after a backslash
	key        []byte
	val        []byte
	over       bool // the current key or value exceeded skimMax
	capture    bool // the current value is "id" or "method"
	id, method []byte
	hasMethod  bool
	hasResult  bool // "result" or "error"
}

type skimPhase int

const (
	skimBegin   skimPhase = iota // before the top-level '{'
	skimKey                      // expecting a key or '}'
	skimInKey                    // inside a key
	skimColon                    // expecting ':'
	skimValue                    // expecting a value
	skimInValue                  // inside a value
	skimComma                    // expecting ',' or '}'
	skimDone                     // after the object, or lost
)

const skimMax = 256

// skimKind classifies a skimmed message.
type skimKind int

const (
	skimUnknown skimKind = iota
	skimRequest
	skimNotification
	skimResponse
)

func (k *skimmer) feed(p []byte) {
	for i := 0; i < len(p) && k.phase != skimDone; i++ {
		c := p[i]
		switch k.phase {
		case skimBegin:
			k.expect(c, '{', skimKey)
		case skimKey:
			k.expect(c, '"', skimInKey) // '}' or garbage ends
			if k.phase == skimInKey {
				k.key, k.over, k.esc = k.key[:0], false, false
			}
		case skimInKey:
			k.inKey(c)
		case skimColon:
			k.expect(c, ':', skimValue)
		case skimValue:
			if !isSpace(c) {
				k.startValue()
				i-- // the first byte of the value is read in skimInValue
			}
		case skimInValue:
			i = k.inValue(p, i)
		case skimComma:
			k.expect(c, ',', skimKey) // '}' or garbage ends
		}
	}
}

// expect moves to next on want; spaces are skipped, anything else ends the
// skim.
func (k *skimmer) expect(c, want byte, next skimPhase) {
	switch {
	case isSpace(c):
	case c == want:
		k.phase = next
	default:
		k.phase = skimDone
	}
}

// inKey reads a byte of a key.
func (k *skimmer) inKey(c byte) {
	switch {
	case k.esc:
		k.esc = false
	case c == '\\':
		k.esc = true
	case c == '"':
		k.phase = skimColon
		return
	}
	if len(k.key) < skimMax {
		k.key = append(k.key, c)
	} else {
		k.over = true
	}
}

// startValue notes the key just read and starts its value.
func (k *skimmer) startValue() {
	key := string(k.key)
	if bytes.IndexByte(k.key, '\\') >= 0 && json.Unmarshal([]byte(`"`+key+`"`), &key) != nil {
		key = ""
	}
	k.key = append(k.key[:0], key...)
	k.capture = !k.over && (key == "id" || key == "method")
	k.over = false
	switch key {
	case "method":
		k.hasMethod = true
	case "result", "error":
		k.hasResult = true
	}
	k.phase, k.val, k.depth, k.inStr, k.esc = skimInValue, k.val[:0], 0, false, false
}

// inValue reads the value's byte at p[i] (jumping through long strings it
// does not capture) and returns the index of the last byte it read.
func (k *skimmer) inValue(p []byte, i int) int {
	c := p[i]
	if k.inStr && !k.capture && !k.esc {
		// Jump through long strings.
		j := bytes.IndexAny(p[i:], "\"\\")
		if j < 0 {
			return len(p)
		}
		i += j
		c = p[i]
	}
	if k.depth == 0 && !k.inStr && len(k.val) > 0 && (isSpace(c) || c == ',' || c == '}') {
		// The end of a number or literal: c is read again after it.
		k.endValue()
		return i - 1
	}
	if k.capture {
		if len(k.val) < skimMax {
			k.val = append(k.val, c)
		} else {
			k.over = true
		}
	} else if len(k.val) == 0 {
		k.val = append(k.val, c) // only "started" matters
	}
	switch {
	case k.inStr:
		switch {
		case k.esc:
			k.esc = false
		case c == '\\':
			k.esc = true
		case c == '"':
			k.inStr = false
			if k.depth == 0 {
				k.endValue()
			}
		}
	case c == '"':
		k.inStr = true
	case c == '{' || c == '[':
		k.depth++
	case c == '}' || c == ']':
		k.depth--
		if k.depth == 0 {
			k.endValue()
		} else if k.depth < 0 {
			k.phase = skimDone
		}
	}
	return i
}

func (k *skimmer) endValue() {
	if k.capture && !k.over {
		switch string(k.key) {
		case "id":
			k.id = append(k.id[:0], k.val...)
		case "method":
			k.method = append(k.method[:0], k.val...)
		}
	}
	k.phase = skimComma
}

// result returns the usable id (nil if none), the method ("" if unknown)
// and what kind of message the body was.
func (k *skimmer) result() (json.RawMessage, string, skimKind) {
	var id json.RawMessage
	if len(k.id) > 0 && validID(k.id) && !isNull(k.id) {
		id = k.id
	}
	var method string
	if len(k.method) > 0 && json.Unmarshal(k.method, &method) != nil {
		method = ""
	}
	method = truncate(method, 100)
	switch {
	case k.hasMethod && id != nil:
		return id, method, skimRequest
	case k.hasMethod && len(k.id) == 0 || k.hasMethod && isNull(k.id):
		return nil, method, skimNotification
	case !k.hasMethod && k.hasResult:
		return id, "", skimResponse
	}
	return id, method, skimUnknown
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
