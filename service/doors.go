package service

import (
	"encoding/json"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/tool"
)

// What a door implements and shows of the model's tools (the questions it
// asks, the edits it reviews and applies, the commands it runs), package
// tool's, and the few session helpers a door needs, under the service's
// names: a door imports the service, api and buffer alone (layers_test.go).
type (
	Decision          = tool.Decision
	PermissionRequest = tool.PermissionRequest
	TrustRequest      = tool.TrustRequest
	EditRequest       = tool.EditRequest
	EditResult        = tool.EditResult
	ShellResult       = tool.ShellResult
	TerminalCommand   = tool.TerminalCommand
	TerminalExit      = tool.TerminalExit
	FileRemover       = tool.FileRemover
	DiagnosticsDoor   = tool.DiagnosticsDoor
	// ShownCalls holds a tool call's question until the door showed the
	// call.
	ShownCalls = tool.ShownCalls
)

// ToolPlugs is what a door plugs into the model's tools (Service.Tools):
// its way to ask the user, to show and apply edits, to run a command in
// its terminal, to read the editor's diagnostics, and its user's choices.
type ToolPlugs interface {
	SetAsker(tool.Asker)
	SetEditDoor(tool.EditDoor)
	SetTerminalDoor(tool.TerminalDoor)
	SetDiagnosticsDoor(DiagnosticsDoor)
	SetAllowReadOnly(allow bool)
	SetWorkspaceMCP(use bool)
	SetSessionMCPServers(sessionID string, servers map[string]json.RawMessage, source string) []error
}

// The user's answers to a question.
const (
	RejectOnce   = tool.RejectOnce
	AllowOnce    = tool.AllowOnce
	AllowAlways  = tool.AllowAlways
	RejectAlways = tool.RejectAlways
)

const (
	// MaxCommandOutput is how much of a command's output the model gets.
	MaxCommandOutput = tool.MaxCommandOutput
	// AskArguments is how much of a call's arguments a question shows.
	AskArguments = tool.AskArguments
	// SoftLimitEnv and DefaultSoftLimitMB: the data directory's soft
	// limit, from the environment, else the default.
	SoftLimitEnv       = session.SoftLimitEnv
	DefaultSoftLimitMB = session.DefaultSoftLimitMB
)

// ErrNotAnswered is a door's error (wrapped) for a question the user did
// not answer in time.
var ErrNotAnswered = tool.ErrNotAnswered

// The tools' wording and wire shapes, as every door gives them.
func PermissionQuestion(r PermissionRequest, limit int) (string, int) {
	return tool.PermissionQuestion(r, limit)
}
func TrustQuestion(r TrustRequest) string      { return tool.TrustQuestion(r) }
func TrustServers(r TrustRequest) []string     { return tool.TrustServers(r) }
func QuestionArguments(args string) string     { return tool.QuestionArguments(args) }
func ToolCallLine(p api.ToolCallParams) string { return tool.ToolCallLine(p) }
func KindOf(name string) string                { return tool.KindOf(name) }
func NamePart(s string) string                 { return tool.NamePart(s) }
func EndStatus(ev ToolFinished) api.ToolStatus { return tool.EndStatus(ev) }
func ToolCallUpdate(sessionID string, ev Event) (api.ToolCallParams, bool) {
	return tool.ToolCallUpdate(sessionID, ev)
}
func WorkspaceTrustRequest(path string) (TrustRequest, bool) { return tool.WorkspaceTrustRequest(path) }

// WriteToDisk applies an edit to the file on disk (a door without the
// file open).
func WriteToDisk(r EditRequest) (EditResult, error) { return tool.WriteToDisk(r) }

// PathFromURI is a file URI's path; Within reports whether path is dir or
// under it; Bytes says a size in words; FirstQuestions names a summary's
// questions; ParseLimitMB reads a soft limit in MiB; DirSize is a folder's
// size.
func PathFromURI(s string) (string, bool) { return session.PathFromURI(s) }
func Within(path, dir string) bool        { return session.Within(path, dir) }
func Bytes(n int64) string                { return session.Bytes(n) }
func FirstQuestions(n int) string         { return session.FirstQuestions(n) }
func ParseLimitMB(s string) (int, error)  { return session.ParseLimitMB(s) }
func DirSize(dir string) int64            { return session.DirSize(dir) }
