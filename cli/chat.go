package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/turn"
)

// providerFlags are the provider settings the command line can override.
func providerFlags(cmd *cobra.Command, p *chat.Provider) {
	cmd.Flags().StringVar(&p.BaseURL, "base-url", "", "OpenAI-compatible API base URL (default $OPENAI_BASE_URL, else OpenAI or a local Ollama)")
	cmd.Flags().StringVar(&p.Model, "model", "", "model name (default $CTXLS_MODEL)")
	cmd.Flags().StringVar(&p.APIKeyEnv, "api-key-env", "", "environment variable holding the API key (default OPENAI_API_KEY)")
}

// noBuffers: the CLI has no editor buffers; files are read from disk.
type noBuffers struct{}

func (noBuffers) TextByPath(string) (string, bool) { return "", false }

// printTurn prints a turn's events to the terminal: the answer to out,
// what happens around it to errOut. It returns the final event.
func printTurn(t *turn.Turn, out, errOut io.Writer) turn.Event {
	var final turn.Event
	for ev := range t.Events() {
		switch ev := ev.(type) {
		case turn.TextDelta:
			fmt.Fprint(out, ev.Text)
		case turn.Activity:
			fmt.Fprintf(errOut, "[%s]\n", ev.Message)
		case turn.FilesChanged:
			fmt.Fprintf(errOut, "[wrote %s/%s, %s]\n", ev.Subdir, ev.Name, session.Bytes(ev.Size))
		case turn.ContextChanged:
			fmt.Fprintf(errOut, "[context %s: %s]\n", ev.Change.SetName, strings.Join(ev.Change.Items, ", "))
		case turn.Compacted:
			fmt.Fprintln(errOut, session.SummaryMarker(*ev.Compaction.Summary.SummaryOf))
		case turn.Done, turn.Cancelled, turn.Failed:
			final = ev
		}
	}
	return final
}

// titleWait bounds how long "ctxls chat" waits for the title request its
// turn started before it exits.
const titleWait = 10 * time.Second

func chatCmd(g *globals, stdin io.Reader) *cobra.Command {
	var (
		prov      chat.Provider
		sessionID string
		cont      bool
		files     []string
		dryRun    bool
		compactAt string
	)
	cmd := &cobra.Command{
		Use:   "chat [--session ID | --continue] [--model MODEL] [--file PATH]... [MESSAGE]",
		Short: "Ask the model; the answer streams to stdout (message from stdin if absent)",
		Long: `Ask the model; the answer streams to stdout. Without a message argument the message is read
from stdin. Without --session or --continue the turn starts a new session.

The session's model is used (see --model), else the provider's. A new session is named by the
model after its first answer; chat waits for that (at most 10 s) before it exits.`,
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			msg, err := chatMessage(args, stdin)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if cont && sessionID != "" {
				return usageError{errors.New("give --session or --continue, not both")}
			}
			id, err := chatSession(cmd, st, sessionID, cont)
			if err != nil {
				return err
			}
			engine := &chat.Engine{Store: st, Buffers: noBuffers{}, Log: discardLogger()}
			svc := &turn.Service{Engine: engine, Log: discardLogger()}
			at, err := chat.ParseCompactAtText(compactAt)
			if err != nil {
				return usageError{fmt.Errorf("--compact-at: %w", err)}
			}
			wd, _ := os.Getwd()
			req := turn.Request{SessionID: id, Message: msg, Files: files, Provider: prov, Roots: []string{wd}, CompactAt: at}
			if cmd.Flags().Changed("model") {
				req.Model = prov.Model // also the session's model from now on
			}
			t, err := svc.Start(ctx, req)
			var pe *turn.ProviderError
			if errors.As(err, &pe) {
				return pe.Err
			}
			if err != nil {
				return err
			}
			defer t.Abandon() // a no-op once the stream was read to its end
			id = t.SessionID
			final := printTurn(t, cmd.OutOrStdout(), cmd.ErrOrStderr())
			fmt.Fprintln(cmd.OutOrStdout())
			// The title request the turn started (if any) is waited for, so a
			// short command does not abandon it; Close stops it past the bound.
			if !engine.WaitBackground(ctx, titleWait) && ctx.Err() == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "(the title request did not finish within %s; the title is kept)\n", titleWait)
			}
			engine.Close()
			sessionLine(cmd, st, id)
			cleanUpAfterTurn(cmd, st, g)
			var res *chat.Result
			switch f := final.(type) {
			case turn.Cancelled:
				return errors.New("cancelled; the partial answer is kept")
			case turn.Failed:
				return f.Err
			case turn.Done:
				res = f.Result
			}
			if res.FinishReason == chat.FinishLength {
				fmt.Fprintln(cmd.ErrOrStderr(), "(the answer was cut at the output token limit)")
			}
			return nil
		}),
	}
	providerFlags(cmd, &prov)
	cmd.Flags().Lookup("model").Usage = "model for this turn, also recorded as the session's model for later turns (default: the session's model, else $CTXLS_MODEL)"
	cmd.Flags().StringVar(&sessionID, "session", "", "continue this session: its id or a unique prefix of it (default: a new session)")
	cmd.Flags().BoolVarP(&cont, "continue", "c", false, "continue the most recently active session")
	cmd.Flags().StringArrayVar(&files, "file", nil, "add a file's content for this turn (repeatable)")
	cmd.Flags().StringVar(&compactAt, "compact-at", os.Getenv("CTXLS_COMPACT_AT"), "summarise earlier turns when the input passes this share of the context window: a percentage (1-100) or \"off\" (default $CTXLS_COMPACT_AT, else 80)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the exact model input (system prompt, history, tools) with token counts; sends and stores nothing, needs no provider")
	turn := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if dryRun {
			return previewChat(c, g, prov, sessionID, cont, files, args, stdin)
		}
		return turn(c, args)
	}
	storageLimitFlag(cmd, &g.storageLimitMB)
	return cmd
}

// chatMessage is the turn's message: the arguments, else stdin.
func chatMessage(args []string, stdin io.Reader) (string, error) {
	msg := strings.Join(args, " ")
	if msg == "" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", err
		}
		msg = strings.TrimSpace(string(b))
	}
	if msg == "" {
		return "", usageError{errors.New("no message: give it as arguments or on stdin")}
	}
	return msg, nil
}

// chatSession is the session a turn continues: --session's (an id or a
// unique prefix), or with --continue the most recently active one; "" for
// a new session.
func chatSession(cmd *cobra.Command, st session.Store, prefix string, cont bool) (string, error) {
	if prefix != "" {
		return st.ResolveID(cmd.Context(), prefix)
	}
	if !cont {
		return "", nil
	}
	latest, _, err := st.List(cmd.Context(), session.ListOptions{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(latest) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "(no session to continue; starting a new one)")
		return "", nil
	}
	return latest[0].ID, nil
}

// sessionLine tells on stderr which session the turn went to, and its title.
func sessionLine(cmd *cobra.Command, st session.Store, id string) {
	if s, err := st.Get(context.WithoutCancel(cmd.Context()), id); err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "session %s  %s\n", id, s.Title)
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "session %s\n", id)
}

func doctorCmd(g *globals) *cobra.Command {
	var prov chat.Provider
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the session store and the model provider configuration, and reach the provider",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			storeErr := checkStore(cmd.Context(), w, g)
			if err := checkProvider(cmd, prov); err != nil {
				return err
			}
			return storeErr
		},
	}
	providerFlags(cmd, &prov)
	return cmd
}

// checkProvider is doctor's provider lines: the configuration resolves, the
// provider answers and has the model.
func checkProvider(cmd *cobra.Command, prov chat.Provider) error {
	w := cmd.OutOrStdout()
	r, err := chat.Resolve(prov, os.Getenv, chat.ProbeOllama)
	if err != nil {
		fmt.Fprintf(w, "✗ configuration: %v\n", err)
		return errors.New("the provider is not configured")
	}
	keyEnv := r.APIKeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	key := "not set (fine for local servers)"
	if r.APIKey() != "" {
		key = "set in " + keyEnv
	}
	fmt.Fprintf(w, "✓ provider: %s\n  model: %s\n  title model: %s\n  API key: %s\n", r.BaseURL, r.Model, r.TitleModel, key)
	cfg := openai.DefaultConfig(r.APIKey())
	cfg.BaseURL = r.BaseURL
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
	defer cancel()
	models, err := openai.NewClientWithConfig(cfg).ListModels(ctx)
	if err != nil {
		fmt.Fprintf(w, "✗ reaching %s: %v\n", r.BaseURL, err)
		return errors.New("the provider cannot be reached")
	}
	var names []string
	for _, m := range models.Models {
		names = append(names, m.ID)
	}
	fmt.Fprintf(w, "✓ reached %s: %d models\n", r.BaseURL, len(names))
	if len(names) > 0 && !slices.Contains(names, r.Model) {
		fmt.Fprintf(w, "✗ model %q is not among them: %s\n", r.Model, strings.Join(names, ", "))
		return errors.New("the model is not available")
	}
	fmt.Fprintf(w, "✓ model %s is available\n", r.Model)
	return nil
}
