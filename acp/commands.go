package acp

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// slashCommand is one of the commands the client offers as "/name". They
// run in the daemon, never call the model (but /title alone, which asks it
// for a title, and /compact, which asks it for a summary), and answer with
// one agent_message_chunk. Adding a command
// is one entry here and its function.
type slashCommand struct {
	name, description, hint string
	run                     func(a *Agent, ctx context.Context, s *openSession, args []string) (string, error)
}

var slashCommands = []slashCommand{
	{"context", "Show the session's relevant context", "", (*Agent).slashContext},
	{"add", "Add files to the session's relevant files", "PATH...", (*Agent).slashAdd},
	{"drop", "Remove files from the session's relevant files", "PATH...", (*Agent).slashDrop},
	{"files", "List the files in the session folder", "", (*Agent).slashFiles},
	{"title", "Rename the session; alone, ask the model for a title", "[TEXT]", (*Agent).slashTitle},
	{"export", "Export the conversation", "[markdown|json]", (*Agent).slashExport},
	{"compact", "Summarise the earlier turns now (the originals are kept)", "", (*Agent).slashCompact},
	{"usage", "Show the tokens the session's turns have cost, by model", "", (*Agent).slashUsage},
	{"undo", "Undo the changes the model made to files in its last turn", "", (*Agent).slashUndo},
	{"redo", "Make again the changes undone last", "", (*Agent).slashRedo},
}

// helpCommand is /help, answered with the commands (kept out of
// slashCommands, which its text lists).
const helpCommand, helpDescription = "help", "List these commands"

// helpText lists the commands, as /help answers.
func helpText() string {
	var b strings.Builder
	b.WriteString("ctxls commands (anything else goes to the model):\n")
	for _, c := range slashCommands {
		name := "/" + c.name
		if c.hint != "" {
			name += " " + c.hint
		}
		fmt.Fprintf(&b, "\n- %s: %s", name, c.description)
	}
	fmt.Fprintf(&b, "\n- /%s: %s\n", helpCommand, helpDescription)
	return b.String()
}

// sendCommands sends available_commands_update.
func (a *Agent) sendCommands(ctx context.Context, id string) {
	cmds := make([]sdk.AvailableCommand, 0, len(slashCommands)+1)
	for _, c := range slashCommands {
		ac := sdk.AvailableCommand{Name: c.name, Description: c.description}
		if c.hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.hint}}
		}
		cmds = append(cmds, ac)
	}
	cmds = append(cmds, sdk.AvailableCommand{Name: helpCommand, Description: helpDescription})
	a.send(ctx, id, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
		SessionUpdate: "available_commands_update", AvailableCommands: cmds,
	}})
}

// runSlash runs text as a slash command when it is one and sends its
// reply; ok is false for anything else (including "/word" that names no
// command: that goes to the model as written). A failure is a reply too
// ("/x failed: ..."), with the error's kind in its _meta:
// {"ctxls": {"error": {"kind": ...}}}, so a client can tell failures apart
// without reading the text.
func (a *Agent) runSlash(ctx context.Context, s *openSession, text string) (ok bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return false
	}
	fields := strings.Fields(text[1:])
	if len(fields) == 0 {
		return false
	}
	if fields[0] == helpCommand && len(fields) == 1 {
		a.send(ctx, s.id, sdk.UpdateAgentMessageText(helpText()))
		return true
	}
	for _, c := range slashCommands {
		if c.name != fields[0] {
			continue
		}
		out, err := c.run(a, ctx, s, fields[1:])
		u := sdk.UpdateAgentMessageText(out)
		if err != nil {
			u = sdk.UpdateAgentMessageText(fmt.Sprintf("/%s failed: %v", c.name, err))
			kind := api.KindOf(service.Fail(err))
			u.AgentMessageChunk.Meta = map[string]any{"ctxls": map[string]any{"error": api.ErrorData{Kind: kind}}}
		}
		a.send(ctx, s.id, u)
		return true
	}
	return false
}

func (a *Agent) slashContext(ctx context.Context, s *openSession, _ []string) (string, error) {
	st, err := a.svc.ContextState(ctx, s.id)
	if err != nil {
		return "", err
	}
	if len(st.Context) == 0 {
		return "No relevant context in this session yet. Add files with /add PATH.", nil
	}
	names := make([]string, 0, len(st.Context))
	for n := range st.Context {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Relevant context:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\n%s:\n", n)
		for _, it := range st.Context[n] {
			note := ""
			if n == api.SetFiles && slices.Contains(st.Missing, it) {
				note = " (missing)"
			}
			fmt.Fprintf(&b, "- %s%s\n", it, note)
		}
	}
	return b.String(), nil
}

func (a *Agent) slashAdd(ctx context.Context, s *openSession, args []string) (string, error) {
	return a.changeFiles(ctx, s, args, false, "add")
}

func (a *Agent) slashDrop(ctx context.Context, s *openSession, args []string) (string, error) {
	return a.changeFiles(ctx, s, args, true, "drop")
}

// changeFiles is /add and /drop: the same operation as the editor's
// ctxls.context.set and the model's tool.
func (a *Agent) changeFiles(ctx context.Context, s *openSession, paths []string, remove bool, verb string) (string, error) {
	if len(paths) == 0 {
		return "", api.Errorf(api.KindInvalidArgument, "name at least one file: /%s PATH...", verb)
	}
	ch, err := a.svc.AddFiles(ctx, s.id, paths, remove, []string{s.cwd})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	switch {
	case len(ch.Added) > 0:
		fmt.Fprintf(&b, "Added %s.", strings.Join(ch.Added, ", "))
	case len(ch.Removed) > 0:
		fmt.Fprintf(&b, "Removed %s.", strings.Join(ch.Removed, ", "))
	default:
		b.WriteString("No change.")
	}
	fmt.Fprintf(&b, " Relevant files: %d.", len(ch.Items))
	for _, w := range ch.Warnings {
		fmt.Fprintf(&b, "\nWarning: %s", w)
	}
	return b.String(), nil
}

func (a *Agent) slashFiles(ctx context.Context, s *openSession, _ []string) (string, error) {
	var b strings.Builder
	for _, sub := range api.Subfolders {
		res, err := a.svc.FilesList(ctx, &api.FilesListArgs{SessionID: s.id, Subdir: sub})
		if err != nil {
			return "", err
		}
		if len(res.Files) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s/:\n", sub)
		for _, n := range res.Files {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if b.Len() == 0 {
		return "The session folder has no files yet.", nil
	}
	return b.String(), nil
}

// slashTitle is ctxls.session.rename with text, and
// ctxls.session.regenerateTitle alone.
func (a *Agent) slashTitle(ctx context.Context, s *openSession, args []string) (string, error) {
	var res *api.SessionResult
	var err error
	if len(args) == 0 {
		res, err = a.svc.SessionRegenerateTitle(ctx, &api.SessionIDArgs{SessionID: s.id})
	} else {
		res, err = a.svc.SessionRename(ctx, &api.SessionRenameArgs{SessionID: s.id, Title: strings.Join(args, " ")})
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Title: %s", res.Session.Title), nil
}

func (a *Agent) slashExport(ctx context.Context, s *openSession, args []string) (string, error) {
	format := "markdown"
	if len(args) > 0 {
		format = args[0]
	}
	res, err := a.svc.SessionExport(ctx, &api.SessionExportArgs{SessionID: s.id, Format: format})
	if err != nil {
		return "", err
	}
	content := res.Content
	if format == "json" {
		content = "```json\n" + content + "\n```"
	}
	return fmt.Sprintf("Exported to %s\n\n%s", res.Path, content), nil
}

// slashCompact is ctxls.session.compact: the earlier turns summarised now
// (the service's event sends usage_update with what the history takes).
func (a *Agent) slashCompact(ctx context.Context, s *openSession, _ []string) (string, error) {
	c, err := a.svc.SessionCompact(ctx, &api.SessionIDArgs{SessionID: s.id})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s\n\nThe model now sees this summary and the turns after message %d; every original message is kept.\n\n%s",
		service.SummaryMarker(c.Summary.SummaryOf), c.CompactedThrough, c.Summary.Content), nil
}

// slashUsage is ctxls.session.usage: what the session's turns have cost.
func (a *Agent) slashUsage(ctx context.Context, s *openSession, _ []string) (string, error) {
	u, err := a.svc.SessionUsage(ctx, &api.SessionIDArgs{SessionID: s.id})
	if err != nil {
		return "", err
	}
	return u.Text(), nil
}

// slashUndo is ctxls.session.undo: the model's last turn's changes taken
// back.
func (a *Agent) slashUndo(ctx context.Context, s *openSession, _ []string) (string, error) {
	res, err := a.svc.SessionUndo(ctx, &api.UndoArgs{SessionID: s.id})
	if err != nil {
		return "", err
	}
	return service.UndoText(res, false), nil
}

// slashRedo is ctxls.session.redo.
func (a *Agent) slashRedo(ctx context.Context, s *openSession, _ []string) (string, error) {
	res, err := a.svc.SessionRedo(ctx, &api.SessionIDArgs{SessionID: s.id})
	if err != nil {
		return "", err
	}
	return service.UndoText(res, true), nil
}
