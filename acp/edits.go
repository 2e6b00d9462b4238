package acp

import (
	"context"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/ctxls/ctxls/service"
)

// acpEdits is the ACP door's way with the model's edits: the text is the
// client's (fs/read_text_file) when it offers it; the review is
// session/request_permission with the edit as a diff; the new text goes
// through fs/write_text_file when the client offers it (into its buffer),
// else to the disk.
type acpEdits struct{ a *Agent }

func (e acpEdits) Read(ctx context.Context, sessionID, path string) (string, string, *int32, bool) {
	a := e.a
	a.mu.Lock()
	read := a.caps.Fs.ReadTextFile
	a.mu.Unlock()
	if !read {
		return "", "", nil, false
	}
	text, err := a.readClientFile(ctx, sessionID, path)
	if err != nil {
		return "", "", nil, false // a file the client does not have: the disk's
	}
	return text, "", nil, true
}

// Review asks with session/request_permission, the edit shown as a diff.
func (e acpEdits) Review(ctx context.Context, r service.EditRequest) (service.Decision, error) {
	a := e.a
	a.shownCalls.Wait(ctx, r.SessionID, r.Call.ID)
	title := editTitle(r)
	kind, status := sdk.ToolKindEdit, sdk.ToolCallStatusPending
	resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(r.SessionID),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(r.Call.ID), Title: &title, Kind: &kind, Status: &status,
			Content: []sdk.ToolCallContent{diffContent(r.Path, r.Create, r.OldText, r.NewText())}, Locations: []sdk.ToolCallLocation{{Path: r.Path}}},
		Options: []sdk.PermissionOption{
			{OptionId: "accept", Name: "Accept", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: "accept_all", Name: "Accept all in this turn", Kind: sdk.PermissionOptionKindAllowAlways},
			{OptionId: "reject", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return service.RejectOnce, err
	}
	if resp.Outcome.Selected == nil {
		return service.RejectOnce, nil
	}
	switch resp.Outcome.Selected.OptionId {
	case "accept":
		return service.AllowOnce, nil
	case "accept_all":
		return service.AllowAlways, nil
	}
	return service.RejectOnce, nil
}

// Apply writes the new text through the client when it offers
// fs/write_text_file, else to the disk.
func (e acpEdits) Apply(ctx context.Context, r service.EditRequest) (service.EditResult, error) {
	a := e.a
	a.mu.Lock()
	write := a.caps.Fs.WriteTextFile
	a.mu.Unlock()
	if !write {
		return service.WriteToDisk(r)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(r.SessionID), Path: r.Path, Content: r.NewText()}); err != nil {
		return service.EditResult{}, err
	}
	return service.EditResult{Applied: true}, nil
}

// editTitle is an edit's tool call title.
func editTitle(r service.EditRequest) string {
	if r.Create {
		return "create " + r.Path
	}
	return "edit " + r.Path
}

// diffContent is an edit as ACP's diff content (no old text for a new
// file).
func diffContent(path string, create bool, oldText, newText string) sdk.ToolCallContent {
	if create {
		return sdk.ToolDiffContent(path, newText)
	}
	return sdk.ToolDiffContent(path, newText, oldText)
}
