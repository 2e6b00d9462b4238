package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/ctxls/ctxls/buffer"
)

// didOpenParams and didChangeParams are the LSP types, decoded with
// encoding/json rather than protocol.Unmarshal (which builds every string
// with escapes by appending to a growing buffer: a 60 MB document cost
// several times its size in garbage), and their texts with jsonText.
type didOpenParams struct {
	TextDocument struct {
		URI        string   `json:"uri"`
		LanguageID string   `json:"languageId"`
		Version    int32    `json:"version"`
		Text       jsonText `json:"text"`
	} `json:"textDocument"`
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []struct {
		Range *struct {
			Start position `json:"start"`
			End   position `json:"end"`
		} `json:"range"` // absent: the whole document
		Text jsonText `json:"text"`
	} `json:"contentChanges"`
}

// jsonText is a JSON string decoded with one allocation of its size:
// encoding/json makes two (an unquote buffer, then the string). It decodes
// exactly as encoding/json does, invalid UTF-8 and lone surrogates becoming
// U+FFFD (FuzzJSONText checks it).
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return &json.UnmarshalTypeError{Value: "non-string", Type: reflect.TypeFor[string]()}
	}
	in := b[1 : len(b)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		*t = jsonText(in)
		return nil
	}
	var sb strings.Builder
	sb.Grow(len(in))
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\\':
			i++ // encoding/json has validated the escapes
			switch in[i] {
			case 'b':
				sb.WriteByte('\b')
			case 'f':
				sb.WriteByte('\f')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 't':
				sb.WriteByte('\t')
			case 'u':
				r := hex4(in[i+1:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
						r2 = hex4(in[i+3:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				sb.WriteRune(r)
			default: // '"', '\\', '/'
				sb.WriteByte(in[i])
			}
			i++
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				sb.WriteRune(utf8.RuneError)
			} else {
				sb.Write(in[i : i+size])
			}
			i += size
		}
	}
	*t = jsonText(sb.String())
	return nil
}

// hex4 decodes four hex digits (validated by encoding/json).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

type position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

func (s *Server) didOpen(raw json.RawMessage) error {
	var p didOpenParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	u := p.TextDocument.URI
	path, _ := uriPath(u)
	return s.overBudget(s.docs.Open(u, path, p.TextDocument.LanguageID, p.TextDocument.Version, string(p.TextDocument.Text)))
}

// overBudget tells the user, once until memory is freed again, that a
// document's text is not held (the model then reads the file from disk),
// and passes every error on to be logged.
func (s *Server) overBudget(err error) error {
	var ob *buffer.OverBudgetError
	if errors.As(err, &ob) && ob.First {
		s.showMessage(context.Background(), 2, fmt.Sprintf("open documents are limited to %d MiB: %s and later ones are not tracked until others are closed (the model reads them from disk).", ob.Limit>>20, truncate(ob.URI, 200)))
	}
	return err
}

func (s *Server) didChange(raw json.RawMessage) error {
	var p didChangeParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	changes := make([]buffer.Change, len(p.ContentChanges))
	for i, c := range p.ContentChanges {
		changes[i].Text = string(c.Text)
		if c.Range != nil {
			changes[i].Range = &buffer.Range{
				Start: buffer.Position{Line: c.Range.Start.Line, Character: c.Range.Start.Character},
				End:   buffer.Position{Line: c.Range.End.Line, Character: c.Range.End.Character},
			}
		}
	}
	s.mu.Lock()
	enc := s.enc
	s.mu.Unlock()
	uri := p.TextDocument.URI
	err := s.docs.Change(uri, p.TextDocument.Version, changes, enc)
	if errors.Is(err, buffer.ErrNotHeld) {
		// Refused at didOpen and already reported: not worth a log line
		// per keystroke.
		s.log.Debug("edit to a document not held", "uri", truncate(uri, 200))
		return nil
	}
	return s.overBudget(err)
}

func (s *Server) didClose(raw json.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.docs.Close(string(p.TextDocument.URI))
	return nil
}

func (s *Server) didSave(raw json.RawMessage) error {
	var p protocol.DidSaveTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.docs.Save(string(p.TextDocument.URI))
	return nil
}
