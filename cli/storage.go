package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// storageLimitFlag adds --storage-soft-limit-mb to a command.
func storageLimitFlag(cmd *cobra.Command, p *int) {
	cmd.Flags().IntVar(p, "storage-soft-limit-mb", 0, fmt.Sprintf("soft limit on the data directory in MiB: over it, intermediate files in sessions' data/ folders are removed, oldest first (default $%s, else %d)", service.SoftLimitEnv, service.DefaultSoftLimitMB))
}

// resolveStorageLimitMB is the soft limit from the command line: the flag,
// else the environment variable; 0 when neither is set.
func (g *globals) resolveStorageLimitMB() (int, error) {
	switch {
	case g.storageLimitMB < 0:
		return 0, usageError{fmt.Errorf("--storage-soft-limit-mb is %d; want a whole number of MiB, at least 1", g.storageLimitMB)}
	case g.storageLimitMB > 0:
		return g.storageLimitMB, nil
	}
	mb, err := service.ParseLimitMB(os.Getenv(service.SoftLimitEnv))
	if err != nil {
		return 0, usageError{fmt.Errorf("%s: %v", service.SoftLimitEnv, err)}
	}
	return mb, nil
}

// storageLimitBytes is the soft limit the CLI applies, in bytes.
func (g *globals) storageLimitBytes() (int64, error) {
	mb, err := g.resolveStorageLimitMB()
	if mb == 0 {
		mb = service.DefaultSoftLimitMB
	}
	return int64(mb) << 20, err
}

// humanBytes is a size for a table: "812 B", "12.4 KiB", "3.0 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// duCmd is "ctxls sessions du": the data directory's size against the soft
// limit.
func duCmd(g *globals) *cobra.Command {
	var top int
	cmd := &cobra.Command{
		Use:   "du",
		Short: "Show how much the data directory holds, against the storage soft limit",
		Args:  cobra.NoArgs,
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, _ []string) error {
			limit, err := g.storageLimitBytes()
			if err != nil {
				return err
			}
			u, err := svc.DiskUsage(cmd.Context())
			if err != nil {
				return err
			}
			if g.jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{
					"dataDir": svc.DataDir(), "total": u.Total, "limit": limit, "overLimit": u.Total > limit,
					"database": u.Database, "other": u.Other, "sessions": u.Sessions,
				})
			}
			w := cmd.OutOrStdout()
			var inSessions int64
			for _, s := range u.Sessions {
				inSessions += s.Size
			}
			fmt.Fprintf(w, "Data directory: %s\n", svc.DataDir())
			fmt.Fprintf(w, "Total:     %s (%s) of the %s soft limit (%.1f%%)\n", humanBytes(u.Total), service.Bytes(u.Total), humanBytes(limit), 100*float64(u.Total)/float64(limit))
			fmt.Fprintf(w, "Database:  %s\n", humanBytes(u.Database))
			fmt.Fprintf(w, "Sessions:  %s in %d session folders\n", humanBytes(inSessions), len(u.Sessions))
			fmt.Fprintf(w, "Other:     %s (tmp/, folders of no session)\n", humanBytes(u.Other))
			if u.Total > limit {
				fmt.Fprintf(w, "Over the soft limit by %s: files in data/ folders are removed, oldest first, when a session is resumed or a turn writes.\n", service.Bytes(u.Total-limit))
			}
			if len(u.Sessions) == 0 {
				return nil
			}
			fmt.Fprintln(w)
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTITLE\tFOLDER SIZE")
			for i, s := range u.Sessions {
				if i == top {
					fmt.Fprintf(tw, "…\t%d more\t\n", len(u.Sessions)-top)
					break
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, oneLine(s.Title, 50), humanBytes(s.Size))
			}
			return tw.Flush()
		}),
	}
	storageLimitFlag(cmd, &g.storageLimitMB)
	cmd.Flags().IntVar(&top, "top", 10, "list this many of the largest sessions")
	return cmd
}

// parseAge parses a duration like 90d, 2w, 12h or 45m (or anything
// time.ParseDuration takes); it must be positive.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%q is not a duration; give one like 90d, 2w or 12h", s)
	var d time.Duration
	if n := len(s); n > 1 && (s[n-1] == 'd' || s[n-1] == 'w') {
		v, err := strconv.ParseInt(s[:n-1], 10, 32)
		if err != nil {
			return 0, bad
		}
		d = time.Duration(v) * 24 * time.Hour
		if s[n-1] == 'w' {
			d *= 7
		}
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, bad
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be longer than zero", s)
	}
	return d, nil
}

// pruneCmd is "ctxls sessions prune": delete the sessions with no activity
// for a while.
func pruneCmd(g *globals) *cobra.Command {
	var (
		inactiveFor string
		dryRun      bool
	)
	cmd := &cobra.Command{
		Use:   "prune --inactive-for DURATION [--dry-run]",
		Short: "Delete sessions with no activity for DURATION (90d, 2w, 12h), with their messages, context and folders",
		Args:  cobra.NoArgs,
		RunE: withService(g, func(cmd *cobra.Command, svc *service.Service, _ []string) error {
			if inactiveFor == "" {
				return usageError{fmt.Errorf("%s needs --inactive-for, e.g. --inactive-for 90d", cmd.CommandPath())}
			}
			age, err := parseAge(inactiveFor)
			if err != nil {
				return usageError{fmt.Errorf("--inactive-for: %v", err)}
			}
			cutoff := time.Now().Add(-age)
			candidates, err := svc.Prune(cmd.Context(), cutoff, true)
			if err != nil {
				return err
			}
			// Sizes and context items are taken before the sessions go.
			rows := withStorage(cmd.Context(), svc, candidates)
			if !dryRun {
				var deleted []api.SessionSummary
				deleted, err = svc.Prune(cmd.Context(), cutoff, false)
				gone := map[string]bool{}
				for _, s := range deleted {
					gone[s.ID] = true
				}
				kept := rows[:0]
				for _, r := range rows {
					if gone[r.ID] {
						kept = append(kept, r)
					}
				}
				rows = kept
			}
			if g.jsonOut {
				if jerr := writeJSON(cmd.OutOrStdout(), map[string]any{"dryRun": dryRun, "inactiveSince": cutoff.UTC(), "sessions": rows}); jerr != nil {
					return jerr
				}
				return err
			}
			w := cmd.OutOrStdout()
			verb := "Deleted"
			if dryRun {
				verb = "Would delete"
			}
			var freed int64
			for _, s := range rows {
				freed += s.FolderSize
				fmt.Fprintf(w, "%s %s  %q  last activity %s  (%d messages, %s)\n", verb, s.ID, oneLine(s.Title, 50), when(s.UpdatedAt), s.MessageCount, humanBytes(s.FolderSize))
			}
			switch {
			case len(rows) == 0:
				fmt.Fprintf(w, "No session has been inactive for %s (since %s).\n", inactiveFor, when(cutoff))
			case dryRun:
				fmt.Fprintf(w, "%d sessions inactive since %s, %s; nothing deleted (--dry-run).\n", len(rows), when(cutoff), humanBytes(freed))
			default:
				fmt.Fprintf(w, "Deleted %d sessions inactive since %s, freeing %s.\n", len(rows), when(cutoff), humanBytes(freed))
			}
			return err
		}),
	}
	cmd.Flags().StringVar(&inactiveFor, "inactive-for", "", "delete sessions with no activity for this long: 90d, 2w, 12h")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be deleted and delete nothing")
	return cmd
}
