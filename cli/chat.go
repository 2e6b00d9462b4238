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

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// providerFlags are the provider settings the command line can override.
func providerFlags(cmd *cobra.Command, p *api.Provider) {
	cmd.Flags().StringVar(&p.API, "api", "", `the provider's API: "openai" (OpenAI-compatible, the default) or "anthropic" (Anthropic's Messages API); default: inferred from the base URL`)
	cmd.Flags().StringVar(&p.BaseURL, "base-url", "", "the API's base URL (default $OPENAI_BASE_URL, else OpenAI or a local Ollama; https://api.anthropic.com for --api anthropic)")
	cmd.Flags().StringVar(&p.Model, "model", "", "model name (default $CTXLS_MODEL)")
	cmd.Flags().StringVar(&p.APIKeyEnv, "api-key-env", "", "environment variable holding the API key (default OPENAI_API_KEY, ANTHROPIC_API_KEY for --api anthropic)")
}

// printTurn prints a turn's answer to out and what happens around it to
// errOut. It returns the final event.
func printTurn(t *service.Turn, out, errOut io.Writer) service.Event {
	var final service.Event
	for ev := range t.Events() {
		switch ev := ev.(type) {
		case service.TextDelta:
			fmt.Fprint(out, termsafe.Text(ev.Text))
		case service.Activity:
			fmt.Fprintf(errOut, "[%s]\n", termsafe.Text(ev.Message))
		case service.Compacted:
			fmt.Fprintln(errOut, termsafe.Text(service.CompactionMarker(ev)))
		case service.ToolStarted, service.ToolAllowed, service.ToolProgress, service.ToolFinished:
			// MCP tools' calls, and any call that failed.
			if tc, ok := service.ToolCallUpdate(t.SessionID, ev); ok && (tc.Server != "" || tc.Status == api.ToolFailed) && tc.Status != api.ToolPending {
				fmt.Fprintf(errOut, "[%s]\n", termsafe.Line(service.ToolCallLine(tc)))
			}
		case service.PlanChanged:
			fmt.Fprintf(errOut, "[plan]\n")
			printPlan(errOut, service.PlanParams(ev).Entries)
		case service.Done, service.Cancelled, service.Failed:
			final = ev
		}
	}
	return final
}

// printEvents prints on errOut what the service's operations change around
// a turn: the model's files and context changes, storage clean-ups.
func printEvents(errOut io.Writer) func(service.Update) {
	return func(ev service.Update) {
		switch ev := ev.(type) {
		case service.SessionFilesChanged:
			fmt.Fprintf(errOut, "[wrote %s/%s, %s]\n", termsafe.Line(ev.Subdir), termsafe.Line(ev.Name), service.Bytes(ev.Size))
		case service.SessionContextChanged:
			fmt.Fprintf(errOut, "[context files: %s]\n", strings.Join(termsafe.Lines(ev.Context[api.SetFiles]), ", "))
		case service.Notice:
			fmt.Fprintf(errOut, "ctxls: %s\n", termsafe.Text(ev.Message))
		}
	}
}

// titleWait bounds how long "ctxls chat" waits for the title request its
// turn started before it exits.
const titleWait = 10 * time.Second

func chatCmd(g *globals, stdin io.Reader) *cobra.Command {
	o := &chatOptions{}
	cmd := &cobra.Command{
		Use:   "chat [--session ID | --continue] [--again] [--model MODEL] [--file PATH]... [MESSAGE]",
		Short: "Ask the model; the answer streams to stdout (message from stdin if absent)",
		Long: `Ask the model; the answer streams to stdout. Without a message argument the message is read
from stdin. Without --session or --continue the turn starts a new session.

The session's model is used (see --model), else the provider's. A new session is named by the
model after its first answer; chat waits for that (at most 10 s) before it exits.

With --again the session's last question is asked again in place of its answer (to retry a failed
answer or get another), or MESSAGE is asked in its place (an edited question): that question and
what followed it are removed from the session first.`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, g, stdin, args) },
	}
	providerFlags(cmd, &o.prov)
	cmd.Flags().Lookup("model").Usage = "model for this turn, also recorded as the session's model for later turns (default: the session's model, else $CTXLS_MODEL)"
	cmd.Flags().StringVar(&o.sessionID, "session", "", "continue this session: its id or a unique prefix of it (default: a new session)")
	cmd.Flags().BoolVarP(&o.cont, "continue", "c", false, "continue the most recently active session")
	cmd.Flags().BoolVar(&o.again, "again", false, "ask the session's last question again in place of its answer, or MESSAGE in its place; needs --session or --continue")
	cmd.Flags().StringArrayVar(&o.files, "file", nil, "add a file's content for this turn (repeatable)")
	cmd.Flags().StringVar(&o.compactAt, "compact-at", os.Getenv("CTXLS_COMPACT_AT"), "summarise earlier turns when the input passes this share of the context window: a percentage (1-100) or \"off\" (default $CTXLS_COMPACT_AT, else 80)")
	cmd.Flags().BoolVar(&o.noInstr, "no-project-instructions", false, "do not give the model the workspace's AGENTS.md files (else CLAUDE.md or .github/copilot-instructions.md at the root)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the exact model input (system prompt, history, tools) with token counts; sends and stores nothing, needs no provider")
	cmd.Flags().StringArrayVar(&o.allow, "allow-tool", nil, "let the model call the MCP tools matching this pattern without asking (repeatable; e.g. github/list_*): SERVER/TOOL, split at the first / and each matched against the exact name, with *, ? and [...]; or mcp__SERVER__TOOL, split at the first __ after mcp__ (so mcp__gh__* never allows a server named gh__evil: name such a server as gh__evil/*); * alone allows every MCP tool; run_command (that exact name, never matched by * or a pattern) lets the model run any command line without asking")
	cmd.Flags().StringVar(&o.edits, "edits", "", "how the model's edits to your files are reviewed in the session, kept with it: ask (each shown on the terminal; the default), auto (applied at once) or off (no edit tools)")
	cmd.Flags().BoolVar(&o.readOnly, "allow-read-only-tools", false, "let the model call MCP tools their server marks read-only without asking")
	storageLimitFlag(cmd, &g.storageLimitMB)
	return cmd
}

// chatOptions are ctxls chat's flags.
type chatOptions struct {
	prov      api.Provider
	sessionID string
	cont      bool
	files     []string
	dryRun    bool
	compactAt string
	noInstr   bool
	allow     []string
	readOnly  bool
	edits     string
	again     bool
}

func (o *chatOptions) run(cmd *cobra.Command, g *globals, stdin io.Reader, args []string) error {
	if o.cont && o.sessionID != "" {
		return usageError{errors.New("give --session or --continue, not both")}
	}
	if o.again && !o.cont && o.sessionID == "" {
		return usageError{errors.New("--again asks a session's last question again: give --session or --continue")}
	}
	if o.edits != "" && !slices.Contains([]string{string(api.ReviewAsk), string(api.ReviewAuto), string(api.ReviewOff)}, o.edits) {
		return usageError{fmt.Errorf("--edits is ask, auto or off, got %q", o.edits)}
	}
	msg := ""
	if !o.again || len(args) > 0 {
		var err error
		if msg, err = chatMessage(args, stdin); err != nil {
			return err
		}
	}
	at, err := api.ParseCompactAtText(o.compactAt)
	if err != nil {
		return usageError{fmt.Errorf("--compact-at: %w", err)}
	}
	if o.dryRun {
		if o.again {
			return usageError{errors.New("--dry-run previews a new question; it cannot be combined with --again")}
		}
		return previewChat(cmd, g, o.sessionID, o.cont, o.files, msg, !o.noInstr)
	}
	svc, err := g.openService(cmd.Context(), o.prov)
	if err != nil {
		return err
	}
	defer svc.Close()
	svc.SetCompactAt(at)
	svc.SetProjectInstructions(!o.noInstr)
	svc.Subscribe(printEvents(cmd.ErrOrStderr()))
	asker := &toolAsker{allow: o.allow, errOut: cmd.ErrOrStderr(), tty: terminal()}
	svc.Tools().SetAsker(asker.ask)
	svc.Tools().SetEditDoor(cliEdits{errOut: cmd.ErrOrStderr(), asker: asker})
	svc.Tools().SetAllowReadOnly(o.readOnly)
	svc.Tools().SetWorkspaceMCP(true)
	return runChat(cmd, svc, chatRun{prefix: o.sessionID, cont: o.cont, msg: msg, files: o.files, model: o.prov.Model,
		modelSet: cmd.Flags().Changed("model"), edits: o.edits, again: o.again})
}

// chatRun is what a "ctxls chat" turn is asked with.
type chatRun struct {
	prefix   string // --session
	cont     bool   // --continue
	msg      string
	files    []string
	model    string
	modelSet bool   // --model given: recorded as the session's
	edits    string // --edits: the session's review mode from now on
	again    bool   // --again: in place of the last question (msg "": the same text)
}

// runChat runs one turn of "ctxls chat" and prints it.
func runChat(cmd *cobra.Command, svc *service.Service, c chatRun) error {
	ctx := cmd.Context()
	id, err := chatSession(cmd, svc, c.prefix, c.cont)
	if err != nil {
		return err
	}
	if c.edits != "" {
		res, err := svc.SessionSetReviewMode(ctx, &api.SetReviewModeArgs{SessionID: id, Mode: api.ReviewMode(c.edits)})
		if err != nil {
			return err
		}
		id = res.Session.ID
	}
	opts := service.TurnOptions{}
	if c.modelSet {
		opts.Model = c.model
	}
	opts.Again = c.again // the last question is found with the turn's own read of the session
	args := &api.ChatArgs{SessionID: id, Message: c.msg, Files: c.files}
	t, err := svc.StartTurn(ctx, args, opts)
	if err != nil {
		return err
	}
	defer t.Abandon() // a no-op once the stream was read to its end
	final := printTurn(t, cmd.OutOrStdout(), cmd.ErrOrStderr())
	fmt.Fprintln(cmd.OutOrStdout())
	// The title request the turn started (if any) is waited for, so a
	// short command does not abandon it; Close stops it past the bound.
	if !svc.WaitBackground(ctx, titleWait) && ctx.Err() == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "(the title request did not finish within %s; the title is kept)\n", titleWait)
	}
	sessionLine(cmd, svc, t.SessionID)
	res, err := service.Outcome(final)
	if err != nil {
		if api.KindOf(err) == api.KindCancelled {
			return api.Errorf(api.KindCancelled, "cancelled; the partial answer is kept")
		}
		return err
	}
	if len(res.Edited) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "(the model changed %s)\n", strings.Join(termsafe.Lines(res.Edited), ", "))
	}
	if res.FinishReason == api.FinishLength {
		fmt.Fprintln(cmd.ErrOrStderr(), "(the answer was cut at the output token limit)")
	}
	return nil
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
func chatSession(cmd *cobra.Command, svc *service.Service, prefix string, cont bool) (string, error) {
	if prefix != "" {
		return svc.ResolveID(cmd.Context(), prefix)
	}
	if !cont {
		return "", nil
	}
	latest, err := svc.SessionList(cmd.Context(), &api.SessionListArgs{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(latest.Sessions) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "(no session to continue; starting a new one)")
		return "", nil
	}
	return latest.Sessions[0].ID, nil
}

// sessionLine tells on stderr which session the turn went to, and its title.
func sessionLine(cmd *cobra.Command, svc *service.Service, id string) {
	if s, err := svc.Session(context.WithoutCancel(cmd.Context()), id); err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "session %s  %s\n", id, termsafe.Line(s.Title))
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "session %s\n", id)
}

func doctorCmd(g *globals) *cobra.Command {
	var prov api.Provider
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the session store and the model provider configuration, reach the provider, and start each MCP server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Everything is checked; the exit status is the provider's
			// failure, else the store's, else the MCP servers'.
			storeErr := checkStore(cmd.Context(), cmd.OutOrStdout(), g)
			// The provider and MCP checks need no store.
			svc := service.New(nil, service.Config{Provider: prov, NoEnvHint: true, ProviderWhere: cliProviderWhere})
			defer svc.Close()
			providerErr := checkProvider(cmd, svc)
			mcpErr := checkMCP(cmd, svc)
			for _, err := range []error{providerErr, storeErr, mcpErr} {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	providerFlags(cmd, &prov)
	return cmd
}

// cliProviderWhere is where the CLI's user sets the provider.
const cliProviderWhere = "Set them in the environment, or pass --base-url and --model (--api anthropic for Anthropic)."

// checkProvider is doctor's provider lines: the configuration resolves, the
// provider answers and has the model.
func checkProvider(cmd *cobra.Command, svc *service.Service) error {
	w := cmd.OutOrStdout()
	c, err := svc.CheckProvider(cmd.Context(), api.Provider{})
	if c == nil {
		fmt.Fprintf(w, "✗ configuration: %v\n", err)
		return api.Errorf(api.KindNoProvider, "the provider is not configured")
	}
	key := "not set (fine for local servers)"
	if c.HasKey {
		key = "set in " + c.KeyEnv
	}
	if c.NoModel {
		// The server's models, listed for one to be picked.
		fmt.Fprintf(w, "✓ provider: %s (%s API)\n  API key: %s\n✗ model: none configured (set CTXLS_MODEL or pass --model)\n", c.BaseURL, c.API, key)
		switch {
		case c.ListErr != nil:
			fmt.Fprintf(w, "✗ reaching %s: %v\n", c.BaseURL, c.ListErr)
		case len(c.Models) > 0:
			fmt.Fprintf(w, "  the server offers: %s\n", strings.Join(c.Models, ", "))
		}
		return api.Errorf(api.KindNoProvider, "no model is configured")
	}
	fmt.Fprintf(w, "✓ provider: %s (%s API)\n  model: %s\n  title model: %s\n  API key: %s\n", c.BaseURL, c.API, c.Model, c.TitleModel, key)
	if err != nil {
		fmt.Fprintf(w, "✗ reaching %s: %v\n", c.BaseURL, err)
		return api.Errorf(api.KindProviderFailed, "the provider cannot be reached")
	}
	fmt.Fprintf(w, "✓ reached %s: %d models\n", c.BaseURL, len(c.Models))
	if len(c.Models) > 0 && !slices.Contains(c.Models, c.Model) {
		fmt.Fprintf(w, "✗ model %q is not among them: %s\n", c.Model, strings.Join(c.Models, ", "))
		return api.Errorf(api.KindProviderFailed, "the model is not available")
	}
	fmt.Fprintf(w, "✓ model %s is available\n", c.Model)
	return nil
}

// checkMCP is doctor's MCP lines: each configured server started (or
// reached) and its tools counted, or why not; configuration errors.
func checkMCP(cmd *cobra.Command, svc *service.Service) error {
	w := cmd.OutOrStdout()
	res, err := svc.McpList(cmd.Context(), &api.MCPListArgs{Tools: true})
	if err != nil {
		return err
	}
	failed := len(res.Errors)
	for _, s := range res.Servers {
		if s.Error != "" {
			failed++
			fmt.Fprintf(w, "✗ MCP server %s (%s, from %s): %s\n", termsafe.Line(s.Name), s.Type, termsafe.Line(s.Source), termsafe.Text(s.Error))
			continue
		}
		fmt.Fprintf(w, "✓ MCP server %s (%s, from %s): %d tools\n", termsafe.Line(s.Name), s.Type, termsafe.Line(s.Source), len(s.Tools))
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "✗ MCP configuration: %s\n", termsafe.Text(e))
	}
	if failed > 0 {
		return fmt.Errorf("%d MCP servers cannot be used", failed)
	}
	return nil
}
