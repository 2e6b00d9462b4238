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

	"go.lsp.dev/jsonrpc2"
)

// MaxMessageBytes is the largest message body the daemon accepts. A larger
// declared Content-Length is answered with an Invalid Request error and its
// body is skipped without being allocated. 64 MiB leaves room for a 25 MB file
// sent base64-encoded through ctxls.files.add.
const MaxMessageBytes = 64 << 20

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
}

func newStream(in io.Reader, out io.Writer, closer io.Closer, log *slog.Logger) *stream {
	return &stream{in: bufio.NewReaderSize(in, 64<<10), out: out, closer: closer, log: log, limit: MaxMessageBytes}
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
func (s *stream) ReadFrame(ctx context.Context) ([]byte, int64, error) {
	for {
		body, n, err := s.readBody(ctx)
		if err != nil {
			return nil, 0, err
		}
		id, code, msg, ok := checkFrame(body)
		if ok {
			return body, n, nil
		}
		if code == 0 {
			s.log.Warn("response without an id dropped", "body", truncate(string(body), 200))
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
			s.log.Warn("message too large", "bytes", length, "limit", s.limit)
			if _, err := io.CopyN(io.Discard, s.in, int64(length)); err != nil {
				return nil, 0, io.ErrUnexpectedEOF
			}
			s.replyError(nil, jsonrpc2.InvalidRequest,
				fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", length, s.limit))
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
			if _, err := io.CopyN(io.Discard, s.in, int64(length)); err != nil {
				return 0, size, io.ErrUnexpectedEOF
			}
		}
		return 0, size, badHeaderError(problem)
	}
	if length < 0 {
		return 0, size, badHeaderError("message header has no Content-Length")
	}
	return length, size, nil
}

// frameShape is what checkFrame needs to know about a frame.
type frameShape struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
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
			return nil, jsonrpc2.InvalidRequest, fmt.Sprintf("invalid JSON-RPC message: field %q has the wrong type", typeErr.Field), false
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
		return f.ID, jsonrpc2.InvalidRequest, `invalid JSON-RPC message: "jsonrpc" must be "2.0"`, false
	}
	if f.Method != nil {
		if *f.Method == "" {
			return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: empty method", false
		}
		if len(f.Params) > 0 && f.Params[0] != '{' && f.Params[0] != '[' && !isNull(f.Params) {
			return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: params must be an object or an array", false
		}
		return nil, 0, "", true
	}
	if len(f.Result) > 0 || len(f.Error) > 0 {
		if len(f.ID) > 0 {
			return nil, 0, "", true // a response to one of our calls
		}
		return nil, 0, "response without an id", false // code 0: drop, never answer a response
	}
	return f.ID, jsonrpc2.InvalidRequest, "invalid JSON-RPC message: no method", false
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

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, err
	}
	return s.WriteFrame(ctx, body)
}

// WriteFrame frames an encoded body and writes it with one Write.
func (s *stream) WriteFrame(ctx context.Context, body []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	buf := make([]byte, 0, len(body)+32)
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, body...)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := s.out.Write(buf)
	return int64(n), err
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
