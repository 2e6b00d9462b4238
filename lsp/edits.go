package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.lsp.dev/uri"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/buffer"
	"github.com/ctxls/ctxls/service"
)

// editCaps is what the client said it can do with edits.
type editCaps struct {
	apply    bool // workspace/applyEdit
	versions bool // documentChanges: TextDocumentEdit with versions
	create   bool // the CreateFile resource operation
	remove   bool // the DeleteFile resource operation
	review   bool // ctxls/reviewEdit (initializationOptions.reviewEdits)
}

// The answers of the review question (window/showMessageRequest).
const (
	accept    = "Accept"
	acceptAll = "Accept all in this turn"
	reject    = "Reject"
)

// lspEdits is the LSP door's way with the model's edits: the text of an
// open document is the editor's; the user reviews with ctxls/reviewEdit
// (clients that show a diff), ctxls/question (clients that set questions)
// or window/showMessageRequest (every client);
// workspace/applyEdit applies the edit to the editor's buffer, with the
// version it was computed against, so an edit made meanwhile makes the
// editor refuse it rather than misapply it.
type lspEdits struct{ s *Server }

func (e lspEdits) Read(_ context.Context, _, path string) (string, string, *int32, bool) {
	uri, text, version, ok := e.s.docs.Document(path)
	if !ok {
		return "", "", nil, false
	}
	return text, uri, &version, true
}

// Review asks the user about an edit.
func (e lspEdits) Review(ctx context.Context, r service.EditRequest) (service.Decision, error) {
	d, _, err := e.ReviewParts(ctx, r)
	return d, err
}

// ReviewParts asks the user about an edit; a client that shows the diff
// (ctxls/reviewEdit) may accept a part of it: the text it chose.
func (e lspEdits) ReviewParts(ctx context.Context, r service.EditRequest) (service.Decision, *string, error) {
	s := e.s
	s.mu.Lock()
	caps := s.edits
	s.mu.Unlock()
	ctx, cancel, timeout := s.questionContext(ctx)
	defer cancel()
	s.shownCalls.Wait(ctx, r.SessionID, r.Call.ID)
	if caps.review {
		var answer *api.ReviewEditResult
		if _, err := s.conn.Call(ctx, api.ReviewEdit, reviewParams(r), &answer); err != nil {
			return service.RejectOnce, nil, notAnswered(ctx, timeout, err)
		}
		if answer == nil {
			return service.RejectOnce, nil, nil
		}
		switch answer.Decision {
		case api.ReviewAccept:
			return service.AllowOnce, answer.Text, nil
		case api.ReviewAcceptAll:
			return service.AllowAlways, answer.Text, nil
		}
		return service.RejectOnce, nil, nil
	}
	msg := fmt.Sprintf("ctxls: the model wants to %s %s (%s). Apply it?", map[bool]string{true: "create", false: "edit"}[r.Create], r.Path, r.Summary)
	s.mu.Lock()
	inChat := s.asksInChat
	s.mu.Unlock()
	if inChat {
		action, err := s.ask(ctx, api.QuestionParams{
			SessionID: r.SessionID, Kind: api.QuestionReview, Message: msg, ToolCallID: r.Call.ID,
			Actions: []api.QuestionAction{
				{ID: api.ActionAccept, Title: accept},
				{ID: api.ActionReject, Title: reject},
				{ID: api.ActionAcceptAll, Title: acceptAll, Deliberate: true},
			},
		})
		return actionDecisions[action], nil, notAnswered(ctx, timeout, err)
	}
	title, err := s.showMessageRequest(ctx, timeout, 3, msg, accept, acceptAll, reject)
	return decisions[title], nil, err
}

func reviewParams(r service.EditRequest) api.ReviewEditParams {
	return api.ReviewEditParams{
		SessionID: r.SessionID, ID: r.Call.ID, Path: r.Path, URI: fileURI(r.Path, r.URI), Create: r.Create,
		OldText: r.OldText, NewText: r.NewText(), Diff: r.Diff, Summary: r.Summary,
	}
}

// Apply sends the edit as workspace/applyEdit: the change between the two
// texts as one TextEdit in the negotiated encoding, in a TextDocumentEdit
// with the version it was computed against (null for a file not open), a
// new file as CreateFile and an insert.
func (e lspEdits) Apply(ctx context.Context, r service.EditRequest) (service.EditResult, error) {
	s := e.s
	s.mu.Lock()
	caps, enc := s.edits, s.enc
	s.mu.Unlock()
	switch {
	case !caps.apply:
		return service.EditResult{}, fmt.Errorf("the editor does not apply edits (it lacks workspace.applyEdit)")
	case r.Create && !(caps.versions && caps.create):
		return service.EditResult{}, fmt.Errorf("the editor cannot create files (it lacks workspace.workspaceEdit.resourceOperations \"create\")")
	}
	uri := fileURI(r.Path, r.URI)
	edit := map[string]any{
		"range":   map[string]any{"start": buffer.PositionOf(r.OldText, r.Start, enc), "end": buffer.PositionOf(r.OldText, r.OldEnd, enc)},
		"newText": r.Inserted,
	}
	var version any // null: the file's text on disk
	if r.Version != nil {
		version = *r.Version
	}
	var we map[string]any
	switch {
	case r.Create:
		we = map[string]any{"documentChanges": []any{
			map[string]any{"kind": "create", "uri": uri, "options": map[string]any{"overwrite": false, "ignoreIfExists": false}},
			map[string]any{"textDocument": map[string]any{"uri": uri, "version": nil}, "edits": []any{edit}},
		}}
	case caps.versions:
		we = map[string]any{"documentChanges": []any{
			map[string]any{"textDocument": map[string]any{"uri": uri, "version": version}, "edits": []any{edit}},
		}}
	default:
		we = map[string]any{"changes": map[string]any{uri: []any{edit}}}
	}
	label := r.Label
	if label == "" {
		label = "ctxls: " + map[bool]string{true: "create", false: "edit"}[r.Create] + " " + filepath.Base(r.Path)
	}
	return s.applyEdit(ctx, label, we)
}

// applyEdit sends a WorkspaceEdit as workspace/applyEdit and says what the
// editor made of it.
func (s *Server) applyEdit(ctx context.Context, label string, we map[string]any) (service.EditResult, error) {
	var res struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason"`
	}
	if _, err := s.conn.Call(ctx, "workspace/applyEdit", map[string]any{"label": label, "edit": we}, &res); err != nil {
		return service.EditResult{}, err
	}
	return service.EditResult{Applied: res.Applied, Reason: res.FailureReason}, nil
}

var _ service.FileRemover = lspEdits{}

// Remove removes a file the model created (an undo) as a DeleteFile
// through the editor, which closes its buffer; an editor without the
// DeleteFile operation has it removed from the disk when it is not open
// there (open, it is left: its buffer would hold the text still).
func (e lspEdits) Remove(ctx context.Context, _, path, editorURI string) (service.EditResult, error) {
	s := e.s
	s.mu.Lock()
	caps := s.edits
	s.mu.Unlock()
	if !caps.apply || !caps.versions || !caps.remove {
		if editorURI != "" {
			return service.EditResult{Reason: "it is open in the editor, which cannot remove files (it lacks workspace.workspaceEdit.resourceOperations \"delete\")"}, nil
		}
		if err := os.Remove(path); err != nil {
			return service.EditResult{}, err
		}
		return service.EditResult{Applied: true, OnDisk: true}, nil
	}
	we := map[string]any{"documentChanges": []any{
		map[string]any{"kind": "delete", "uri": fileURI(path, editorURI), "options": map[string]any{"ignoreIfNotExists": true}},
	}}
	return s.applyEdit(ctx, "ctxls: undo, remove "+filepath.Base(path), we)
}

// fileURI is the document's URI: the editor's, else the path's file URI.
func fileURI(path, editorURI string) string {
	if editorURI != "" {
		return editorURI
	}
	return string(uri.File(path))
}
