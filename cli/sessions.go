package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// sessionsCmd is "ctxls sessions": the same store the daemon uses.
func sessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, rename, delete, search and export chat sessions",
		Args:  cobra.NoArgs,
	}
	cmd.PersistentFlags().BoolVar(&g.jsonOut, "json", false, "print JSON instead of a table")

	var listOpt session.ListOptions
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recent activity first",
		Args:  cobra.NoArgs,
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, _ []string) error {
			list, next, err := st.List(cmd.Context(), listOpt)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sessions": withStorage(cmd.Context(), st, list), "nextCursor": next})
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No sessions.")
				return nil
			}
			// Owners and visibilities exist in the PostgreSQL store only;
			// the local store's table stays as it was.
			shared := slices.ContainsFunc(list, func(s session.Session) bool { return s.Owner != "" })
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			head := "ID\tTITLE\tUPDATED\tMESSAGES\tCONTEXT ITEMS\tSESSION FILES\tFOLDER SIZE"
			if shared {
				head += "\tOWNER\tVISIBILITY"
			}
			fmt.Fprintln(tw, head)
			for _, s := range withStorage(cmd.Context(), st, list) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s", s.ID, oneLine(s.Title, 50), when(s.UpdatedAt), s.MessageCount, s.ContextItems, s.FileCount, humanBytes(s.FolderSize))
				if shared {
					fmt.Fprintf(tw, "\t%s\t%s", s.Owner, s.Visibility)
				}
				fmt.Fprintln(tw)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if next != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "More: ctxls sessions list --cursor %s\n", next)
			}
			return nil
		}),
	}
	list.Flags().StringVar(&listOpt.Query, "query", "", "only sessions whose title contains this")
	list.Flags().IntVar(&listOpt.Limit, "limit", 50, "at most this many sessions")
	list.Flags().StringVar(&listOpt.Cursor, "cursor", "", "continue a previous listing")

	show := &cobra.Command{
		Use:   "show SESSION_ID",
		Short: "Show a session and its messages (SESSION_ID may be a unique prefix)",
		Args:  exactArgs(1, "a session id"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			id, err := st.ResolveID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s, err := st.Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			msgs, err := st.Messages(cmd.Context(), s.ID)
			if err != nil {
				return err
			}
			sets, err := st.Context(cmd.Context(), s.ID)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": s, "context": sets, "messages": nonNilSlice(msgs)})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s\n", s.Title)
			fmt.Fprintf(w, "  id:       %s\n  created:  %s\n  updated:  %s\n  folder:   %s\n", s.ID, when(s.CreatedAt), when(s.UpdatedAt), s.Folder)
			if s.Meta.Model != "" {
				fmt.Fprintf(w, "  model:    %s\n", s.Meta.Model)
			}
			if s.Owner != "" {
				fmt.Fprintf(w, "  owner:    %s (%s)\n", s.Owner, s.Visibility)
			}
			for name, items := range sets {
				fmt.Fprintf(w, "  %s: %s\n", name, strings.Join(items, ", "))
			}
			for _, m := range session.InConversationOrder(msgs) {
				if m.IsSummary() {
					fmt.Fprintf(w, "\n%s\n%s\n", session.SummaryMarker(*m.SummaryOf), m.Content)
					continue
				}
				status := ""
				if m.Status != session.StatusComplete {
					status = " (" + string(m.Status) + ")"
				}
				model := ""
				if m.Model != "" {
					model = " · " + m.Model
				}
				fmt.Fprintf(w, "\n[%s%s · %s%s]\n%s\n", m.Role, model, m.CreatedAt.Local().Format("2006-01-02 15:04"), status, m.Content)
			}
			return nil
		}),
	}

	rename := &cobra.Command{
		Use:   "rename SESSION_ID TITLE...",
		Short: "Rename a session (SESSION_ID may be a unique prefix)",
		Args:  minArgs(2, "a session id and a title"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			id, err := st.ResolveID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s, err := st.Rename(cmd.Context(), id, strings.Join(args[1:], " "), session.TitleUser)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": s})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Renamed %s to %q\n", s.ID, s.Title)
			return nil
		}),
	}

	del := &cobra.Command{
		Use:   "delete SESSION_ID...",
		Short: "Delete sessions with their messages, context and folder (each SESSION_ID may be a unique prefix)",
		Args:  minArgs(1, "a session id"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			// Every id is resolved before anything is deleted: a typo in the
			// last one must not leave the first ones half done.
			ids := make([]string, len(args))
			for i, arg := range args {
				id, err := st.ResolveID(cmd.Context(), arg)
				if err != nil {
					return err
				}
				ids[i] = id
			}
			for _, id := range ids {
				if err := st.Delete(cmd.Context(), id); err != nil {
					return err
				}
				if !g.jsonOut {
					fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s\n", id)
				}
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"deleted": ids})
			}
			return nil
		}),
	}

	var searchLimit int
	search := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Full-text search over titles and messages",
		Args:  minArgs(1, "a query"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			hits, err := st.Search(cmd.Context(), strings.Join(args, " "), searchLimit)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"hits": nonNilSlice(hits)})
			}
			if len(hits) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No matches.")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tTITLE\tROLE\tSNIPPET")
			for _, h := range hits {
				role := string(h.Role)
				if h.MessageID == 0 {
					role = "title"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.SessionID, oneLine(h.Title, 40), role, oneLine(h.Snippet, 80))
			}
			return tw.Flush()
		}),
	}
	search.Flags().IntVar(&searchLimit, "limit", 20, "at most this many hits")

	var format string
	export := &cobra.Command{
		Use:   "export SESSION_ID",
		Short: "Export a session as Markdown or JSON into its folder (SESSION_ID may be a unique prefix)",
		Args:  exactArgs(1, "a session id"),
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			id, err := st.ResolveID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			path, content, err := st.Export(cmd.Context(), id, format)
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"path": path, "content": content})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Exported to %s\n", path)
			return nil
		}),
	}
	export.Flags().StringVar(&format, "format", "markdown", "markdown or json")

	cmd.AddCommand(list, show, rename, del, search, export, shareCmd(g), contextCmd(g), titleCmd(g), compactCmd(g), duCmd(g), pruneCmd(g))
	return cmd
}

// shareCmd is "ctxls sessions share": who sees a session in the
// PostgreSQL store.
func shareCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "share SESSION_ID private|team",
		Short: "Set who sees a session in the PostgreSQL store: private (you) or team (every ctxls user) (SESSION_ID may be a unique prefix)",
		Long: `share sets who sees a session in the PostgreSQL store (--store): "private", its
owner only (the default for a new session), or "team", every role that is a member
of ctxls_user. Only the session's owner may change it. The local SQLite store has
no sharing: its sessions are on this machine only.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := exactArgs(2, "a session id and private or team")(cmd, args); err != nil {
				return err
			}
			if v := session.Visibility(args[1]); v != session.VisibilityPrivate && v != session.VisibilityTeam {
				return usageError{fmt.Errorf("%s: visibility %q: want private or team", cmd.CommandPath(), oneLine(args[1], 20))}
			}
			return nil
		},
		RunE: withStore(g, func(cmd *cobra.Command, st session.Store, args []string) error {
			id, err := st.ResolveID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s, err := st.Share(cmd.Context(), id, session.Visibility(args[1]))
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": s})
			}
			if s.Visibility == session.VisibilityTeam {
				fmt.Fprintf(cmd.OutOrStdout(), "Shared %s with the team (every member of ctxls_user sees it)\n", s.ID)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is private: only %s sees it\n", s.ID, s.Owner)
			}
			return nil
		}),
	}
}

// withStore opens the store for a subcommand and closes it afterwards.
func withStore(g *globals, fn func(*cobra.Command, session.Store, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		st, err := g.openStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		return fn(cmd, st, args)
	}
}

// openStore opens the store --store names, else SQLite in the data
// directory (which a PostgreSQL store uses for its local mirror).
func (g *globals) openStore(ctx context.Context) (session.Store, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, err
	}
	url, err := g.resolveStore()
	if err != nil {
		return nil, err
	}
	st, err := backend.Open(ctx, dir, url)
	if err != nil {
		return nil, openError(dir, url, err)
	}
	return st, nil
}

// openError says which store did not open, never with its password.
func openError(dir, url string, err error) error {
	if url == "" {
		return fmt.Errorf("cannot open the session store in %s: %w", dir, err)
	}
	return fmt.Errorf("cannot open the PostgreSQL session store %s: %w", backend.RedactDSN(url), err)
}

// absPaths makes the --file paths absolute.
func absPaths(files []string) ([]string, error) {
	var abs []string
	for _, f := range files {
		p, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		abs = append(abs, p)
	}
	return abs, nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s needs %s (usage: %s)", cmd.CommandPath(), what, cmd.UseLine())}
		}
		return nil
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError{fmt.Errorf("%s needs %s (usage: %s)", cmd.CommandPath(), what, cmd.UseLine())}
		}
		return nil
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// oneLine flattens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func when(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }
