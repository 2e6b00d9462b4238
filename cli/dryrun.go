package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// previewChat is "ctxls chat --dry-run": it prints the exact model input
// the turn would send, with token counts, and stores nothing. It needs no
// provider or key, and opens the store only to read the session given.
func previewChat(cmd *cobra.Command, g *globals, prefix string, cont bool, files []string, msg string, instructions bool) error {
	var svc *service.Service
	if prefix != "" || cont {
		var err error
		if svc, err = g.openService(cmd.Context(), api.Provider{}); err != nil {
			return err
		}
	} else {
		wd, _ := os.Getwd()
		svc = service.New(nil, service.Config{NoEnvHint: true, Version: Version})
		svc.SetRoots([]string{wd})
	}
	defer svc.Close()
	svc.SetProjectInstructions(instructions)
	// The tools are the ones "ctxls chat" offers.
	svc.Tools().SetEditDoor(cliEdits{errOut: cmd.ErrOrStderr(), asker: &toolAsker{errOut: cmd.ErrOrStderr()}})
	svc.Tools().SetWorkspaceMCP(true)
	sessionID := ""
	if prefix != "" || cont {
		var err error
		if sessionID, err = chatSession(cmd, svc, prefix, cont); err != nil {
			return err
		}
	}
	abs, err := absPaths(files)
	if err != nil {
		return err
	}
	pv, err := svc.ChatPreview(cmd.Context(), &api.ChatArgs{SessionID: sessionID, Message: msg, Files: abs})
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Model input for %s (dry run: nothing sent, nothing stored); edits: %s\n", pv.Model, pv.ReviewMode)
	fmt.Fprintf(w, "Tokens: %d in all of a %d-token budget — system %d (relevant files %d), history %d, tools %d\n",
		pv.Tokens.Total, pv.Budget, pv.Tokens.System, pv.Tokens.Files, pv.Tokens.History, pv.Tokens.Tools)
	if pv.Dropped > 0 {
		fmt.Fprintf(w, "%d earlier messages do not fit and are left out\n", pv.Dropped)
	}
	if len(pv.Files) > 0 {
		fmt.Fprintf(w, "With the question: %s\n", termsafe.Line(strings.Join(pv.Files, ", ")))
	}
	for _, in := range pv.Instructions {
		note := ""
		if in.Cut != "" {
			note = " (" + in.Cut + ")"
		}
		fmt.Fprintf(w, "Project instructions: %s%s\n", termsafe.Text(in.Path), termsafe.Text(note))
	}
	for _, m := range pv.Messages {
		fmt.Fprintf(w, "\n── %s · %d tokens ──\n%s\n", m.Role, m.Tokens, termsafe.Text(strings.TrimRight(m.Content, "\n")))
		for _, c := range m.ToolCalls {
			fmt.Fprintf(w, "[tool call %s %s]\n", termsafe.Line(c.Name), termsafe.Line(c.Arguments))
		}
	}
	fmt.Fprintf(w, "\n── tools offered (%d tokens) ──\n", pv.Tokens.Tools)
	for _, t := range pv.Tools {
		fmt.Fprintf(w, "%s (%d tokens): %s\n  %s\n", t.Name, t.Tokens, oneLine(strings.SplitN(strings.TrimSpace(t.Description), "\n", 2)[0], 120), termsafe.Line(string(t.Parameters)))
	}
	return nil
}
