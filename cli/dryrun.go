package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/prompts"
)

// previewChat is "ctxls chat --dry-run": it prints the exact model input
// the turn would send, with token counts, and stores nothing. It needs no
// provider or key, and opens the store only to read the session given.
func previewChat(cmd *cobra.Command, g *globals, prov chat.Provider, prefix string, cont bool, files, args []string, stdin io.Reader) error {
	msg, err := chatMessage(args, stdin)
	if err != nil {
		return err
	}
	engine := &chat.Engine{Buffers: noBuffers{}, Log: discardLogger()}
	sessionID := ""
	if prefix != "" || cont {
		st, err := g.openStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		if sessionID, err = chatSession(cmd, st, prefix, cont); err != nil {
			return err
		}
		engine.Store = st
	}
	abs, err := absPaths(files)
	if err != nil {
		return err
	}
	wd, _ := os.Getwd()
	pv, err := engine.Preview(cmd.Context(), chat.Turn{SessionID: sessionID, Message: msg, Files: abs, Roots: []string{wd},
		Provider: chat.PreviewProvider(prov, os.Getenv)})
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	counter := prompts.TokenizerFor(pv.Model)
	fmt.Fprintf(w, "Model input for %s (dry run: nothing sent, nothing stored)\n", pv.Model)
	fmt.Fprintf(w, "Tokens: %d in all of a %d-token budget — system %d (relevant files %d), history %d\n",
		pv.Total, pv.Budget, pv.System, pv.Files, pv.History)
	if pv.Dropped > 0 {
		fmt.Fprintf(w, "%d earlier messages do not fit and are left out\n", pv.Dropped)
	}
	for _, m := range pv.Messages {
		fmt.Fprintf(w, "\n── %s · %d tokens ──\n%s\n", m.Role, counter.Count(m.Content), strings.TrimRight(m.Content, "\n"))
		for _, c := range m.ToolCalls {
			fmt.Fprintf(w, "[tool call %s %s]\n", c.Function.Name, c.Function.Arguments)
		}
	}
	names := make([]string, len(pv.Tools))
	for i, t := range pv.Tools {
		names[i] = t.Function.Name
	}
	fmt.Fprintf(w, "\n── tools offered ──\n%s\n", strings.Join(names, ", "))
	return nil
}
