package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxFrame is the longest message the agent reads, in bytes. A longer line
// is answered with an error and skipped: the connection goes on.
const MaxFrame = 8 << 20

// frameWriter writes the agent's frames to stdout, one Write per frame
// (the SDK writes each message whole), and lets the agent act right after
// a response goes out: a new session's first notifications must follow
// the session/new response that tells the client its id.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer

	hookMu sync.Mutex
	after  map[string]func() // sessionId in a response's result → action
}

func (f *frameWriter) Write(b []byte) (int, error) {
	f.mu.Lock()
	n, err := f.w.Write(b)
	f.mu.Unlock()
	f.hookMu.Lock()
	pending := len(f.after) > 0
	f.hookMu.Unlock()
	if pending && err == nil {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		if json.Unmarshal(b, &m) == nil && m.Method == "" && m.Result.SessionID != "" {
			f.hookMu.Lock()
			fn := f.after[m.Result.SessionID]
			delete(f.after, m.Result.SessionID)
			f.hookMu.Unlock()
			if fn != nil {
				go fn()
			}
		}
	}
	return n, err
}

// afterResponse runs fn once the response naming sessionID is written.
func (f *frameWriter) afterResponse(sessionID string, fn func()) {
	f.hookMu.Lock()
	defer f.hookMu.Unlock()
	if f.after == nil {
		f.after = map[string]func(){}
	}
	f.after[sessionID] = fn
}

// writeError answers a message the SDK would not: a line that is not JSON
// (JSON-RPC's parse error, with a null id) or one over MaxFrame.
func (f *frameWriter) writeError(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.w.Write(append(b, '\n'))
}

// guard passes the client's lines to the SDK and answers the ones it would
// drop or die on: not JSON (the SDK logs and ignores them, so a client
// waiting for an answer would wait for ever), or longer than MaxFrame (the
// SDK's reader ends the connection).
func guard(in io.Reader, out *frameWriter) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(br)
			if tooLong {
				out.writeError(leadingID(line), -32600, fmt.Sprintf("the message is over %d MiB, the limit; it was not read", MaxFrame>>20))
			} else if t := bytes.TrimSpace(line); len(t) > 0 {
				if !json.Valid(t) {
					out.writeError(nil, -32700, "parse error: the line is not JSON")
				} else if _, werr := pw.Write(append(t, '\n')); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// readLine reads one line; past MaxFrame it keeps the first 4 KiB (to
// find the id), skips the rest and reports tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxFrame {
				tooLong = true
				line = append(line, chunk[:min(len(chunk), max(0, 4096-len(line)))]...)
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			return line, tooLong, io.EOF
		}
		return line, tooLong, err
	}
}

// leadingID finds the id of a message from its first bytes, when the id
// comes before the bulk (as clients write it): {"jsonrpc":"2.0","id":7,...
func leadingID(head []byte) json.RawMessage {
	i := bytes.Index(head, []byte(`"id"`))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(head[i+4:], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	var id json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(rest[1:]))
	if dec.Decode(&id) != nil {
		return nil
	}
	if len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		return id
	}
	return nil
}
