package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/protocol"

	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/lsp/command"
)

func (s *Server) didOpen(raw json.RawMessage) error {
	var p protocol.DidOpenTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	u := string(p.TextDocument.URI)
	path, _ := uriPath(u)
	s.docs.Open(u, path, string(p.TextDocument.LanguageID), p.TextDocument.Version, p.TextDocument.Text)
	return nil
}

func (s *Server) didChange(raw json.RawMessage) error {
	var p protocol.DidChangeTextDocumentParams
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	changes := make([]buffer.Change, 0, len(p.ContentChanges))
	for _, c := range p.ContentChanges {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangePartial:
			r := toRange(c.Range)
			changes = append(changes, buffer.Change{Range: &r, Text: c.Text})
		case *protocol.TextDocumentContentChangeWholeDocument:
			changes = append(changes, buffer.Change{Text: c.Text})
		}
	}
	s.mu.Lock()
	enc := s.enc
	s.mu.Unlock()
	return s.docs.Change(string(p.TextDocument.URI), p.TextDocument.Version, changes, enc)
}

func toRange(r protocol.Range) buffer.Range {
	return buffer.Range{
		Start: buffer.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   buffer.Position{Line: r.End.Line, Character: r.End.Character},
	}
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

// didFocus handles ctxls's textDocument/didFocus {textDocument: {uri}}.
func (s *Server) didFocus(raw json.RawMessage) error {
	var p protocol.DidCloseTextDocumentParams // same shape: {textDocument: {uri}}
	if err := protocol.Unmarshal(raw, &p); err != nil {
		return err
	}
	u := string(p.TextDocument.URI)
	path, _ := uriPath(u)
	s.docs.Focus(u, path)
	return nil
}

func (s *Server) documentGet(_ context.Context, a *command.DocumentGetArgs) (any, error) {
	if a.URI == "" {
		return nil, invalidParams("%s: uri is required", command.DocumentGet)
	}
	text, version, ok := s.docs.Text(a.URI)
	if !ok {
		return nil, invalidParams("%s: %s is not open in the editor", command.DocumentGet, truncate(a.URI, 200))
	}
	return command.DocumentGetResult{V: command.V, URI: a.URI, Version: version, Text: text}, nil
}
