package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// sessionsCmd is "ctxls sessions": the same store the daemon uses, through
// the same operations (package service).
func sessionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, rename, delete, search and export chat sessions",
		Args:  cobra.NoArgs,
	}
	cmd.PersistentFlags().BoolVar(&g.jsonOut, "json", false, "print JSON instead of a table")
	cmd.AddCommand(listCmd(g), showCmd(g), renameCmd(g), deleteCmd(g), searchCmd(g), exportCmd(g), shareCmd(g), contextCmd(g), titleCmd(g), compactCmd(g), usageCmd(g), undoCmd(g, false), undoCmd(g, true), duCmd(g), pruneCmd(g))
	return cmd
}

// listCmd is "ctxls sessions list": ctxls.session.list with each session's
// context items and folder size.
func listCmd(g *globals) *cobra.Command {
	var listArgs api.SessionListArgs
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions, most recent activity first",
		Args:  cobra.NoArgs,
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, _ []string) error {
			res, err := svc.SessionList(cmd.Context(), &listArgs)
			if err != nil {
				return err
			}
			listed := withStorage(cmd.Context(), svc, res.Sessions)
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sessions": listed, "nextCursor": res.NextCursor})
			}
			return printList(cmd.OutOrStdout(), listed, res.NextCursor)
		}),
	}
	list.Flags().StringVar(&listArgs.Query, "query", "", "only sessions whose title contains this")
	list.Flags().IntVar(&listArgs.Limit, "limit", 50, "at most this many sessions")
	list.Flags().StringVar(&listArgs.Cursor, "cursor", "", "continue a previous listing")
	return list
}

// showCmd is "ctxls sessions show": ctxls.session.show with the context.
func showCmd(g *globals) *cobra.Command {
	show := &cobra.Command{
		Use:   "show SESSION_ID",
		Short: "Show a session and its messages (SESSION_ID may be a unique prefix)",
		Args:  exactArgs(1, "a session id"),
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, _ []string) error {
			res, err := svc.SessionShow(cmd.Context(), &api.SessionIDArgs{SessionID: id})
			if err != nil {
				return err
			}
			sets, err := svc.ContextGet(cmd.Context(), &api.ContextGetArgs{SessionID: id})
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": res.Session, "context": sets.Context, "messages": res.Messages})
			}
			printSession(cmd.OutOrStdout(), res, sets.Context)
			return nil
		}),
	}
	return show
}

// renameCmd is "ctxls sessions rename": ctxls.session.rename.
func renameCmd(g *globals) *cobra.Command {
	rename := &cobra.Command{
		Use:   "rename SESSION_ID TITLE...",
		Short: "Rename a session (SESSION_ID may be a unique prefix)",
		Args:  minArgs(2, "a session id and a title"),
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, args []string) error {
			res, err := svc.SessionRename(cmd.Context(), &api.SessionRenameArgs{SessionID: id, Title: strings.Join(args, " ")})
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": res.Session})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Renamed %s to %q\n", res.Session.ID, res.Session.Title)
			return nil
		}),
	}
	return rename
}

// deleteCmd is "ctxls sessions delete": ctxls.session.delete for each id.
func deleteCmd(g *globals) *cobra.Command {
	del := &cobra.Command{
		Use:   "delete SESSION_ID...",
		Short: "Delete sessions with their messages, context and folder (each SESSION_ID may be a unique prefix)",
		Args:  minArgs(1, "a session id"),
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, args []string) error {
			// Every id is resolved before anything is deleted: a typo in the
			// last one must not leave the first ones half done.
			ids := make([]string, len(args))
			for i, arg := range args {
				id, err := svc.ResolveID(cmd.Context(), arg)
				if err != nil {
					return err
				}
				ids[i] = id
			}
			for _, id := range ids {
				if _, err := svc.SessionDelete(cmd.Context(), &api.SessionRefArgs{SessionID: id}); err != nil {
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
	return del
}

// searchCmd is "ctxls sessions search": ctxls.session.search.
func searchCmd(g *globals) *cobra.Command {
	var searchLimit int
	search := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Full-text search over titles and messages",
		Args:  minArgs(1, "a query"),
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, args []string) error {
			res, err := svc.SessionSearch(cmd.Context(), &api.SessionSearchArgs{Query: strings.Join(args, " "), Limit: searchLimit})
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"hits": res.Hits})
			}
			return printHits(cmd.OutOrStdout(), res.Hits)
		}),
	}
	search.Flags().IntVar(&searchLimit, "limit", 20, "at most this many hits")
	return search
}

// exportCmd is "ctxls sessions export": ctxls.session.export.
func exportCmd(g *globals) *cobra.Command {
	var format string
	export := &cobra.Command{
		Use:   "export SESSION_ID",
		Short: "Export a session as Markdown or JSON into its folder (SESSION_ID may be a unique prefix)",
		Args:  exactArgs(1, "a session id"),
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, _ []string) error {
			res, err := svc.SessionExport(cmd.Context(), &api.SessionExportArgs{SessionID: id, Format: format})
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"path": res.Path, "content": res.Content})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Exported to %s\n", res.Path)
			return nil
		}),
	}
	export.Flags().StringVar(&format, "format", "markdown", "markdown or json")
	return export
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
			if v := api.Visibility(args[1]); v != api.VisibilityPrivate && v != api.VisibilityTeam {
				return usageError{fmt.Errorf("%s: visibility %q: want private or team", cmd.CommandPath(), oneLine(args[1], 20))}
			}
			return nil
		},
		RunE: withSession(g, func(cmd *cobra.Command, svc *service.Service, id string, args []string) error {
			res, err := svc.SessionShare(cmd.Context(), &api.SessionShareArgs{SessionID: id, Visibility: api.Visibility(args[0])})
			if err != nil {
				return err
			}
			s := res.Session
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"session": s})
			}
			if s.Visibility == api.VisibilityTeam {
				fmt.Fprintf(cmd.OutOrStdout(), "Shared %s with the team (every member of ctxls_user sees it)\n", s.ID)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is private: only %s sees it\n", s.ID, s.Owner)
			}
			return nil
		}),
	}
}

// withService opens the store for a subcommand as a service and closes it
// afterwards.
func withService(g *globals, fn func(*cobra.Command, *service.Service, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		svc, err := g.openService(cmd.Context(), api.Provider{})
		if err != nil {
			return err
		}
		defer svc.Close()
		return fn(cmd, svc, args)
	}
}

// withSession is withService for a subcommand whose first argument is a
// session id or a unique prefix of it; fn gets the id and the arguments
// after it.
func withSession(g *globals, fn func(*cobra.Command, *service.Service, string, []string) error) func(*cobra.Command, []string) error {
	return withService(g, func(cmd *cobra.Command, svc *service.Service, args []string) error {
		id, err := svc.ResolveID(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return fn(cmd, svc, id, args[1:])
	})
}

// openService opens the store --store names, else SQLite in the data
// directory (which a PostgreSQL store uses for its local mirror), with the
// provider settings of the command's flags.
func (g *globals) openService(ctx context.Context, prov api.Provider) (*service.Service, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, err
	}
	url, err := g.resolveStore()
	if err != nil {
		return nil, err
	}
	mb, err := g.resolveStorageLimitMB()
	if err != nil {
		return nil, err
	}
	wd, _ := os.Getwd()
	svc, err := service.Open(ctx, service.Config{DataDir: dir, Store: url, Log: discardLogger(), Provider: prov, StorageSoftLimitMB: mb, NoEnvHint: true, Version: Version, ProviderWhere: cliProviderWhere})
	if err != nil {
		return nil, err
	}
	svc.SetRoots([]string{wd})
	return svc, nil
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
	s = termsafe.Line(strings.Join(strings.Fields(s), " "))
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func when(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }
