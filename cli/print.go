package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// listedSession is a row of "ctxls sessions list": the session with its
// relevant-context item count and its folder's size.
type listedSession struct {
	api.SessionSummary
	ContextItems int   `json:"contextItems"` // items in all relevant-context sets
	FolderSize   int64 `json:"folderSize"`   // bytes in the session folder
}

func withStorage(ctx context.Context, svc *service.Service, list []api.SessionSummary) []listedSession {
	out := make([]listedSession, len(list))
	for i, s := range list {
		out[i] = listedSession{SessionSummary: s, FolderSize: service.DirSize(s.Folder)}
		if res, err := svc.ContextGet(ctx, &api.ContextGetArgs{SessionID: s.ID}); err == nil {
			for _, items := range res.Context {
				out[i].ContextItems += len(items)
			}
		}
	}
	return out
}

// printList is "ctxls sessions list" as a table.
func printList(w io.Writer, list []listedSession, next string) error {
	if len(list) == 0 {
		fmt.Fprintln(w, "No sessions.")
		return nil
	}
	// Owners and visibilities exist in the PostgreSQL store only; the local
	// store's table stays as it was.
	shared := slices.ContainsFunc(list, func(s listedSession) bool { return s.Owner != "" })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tTITLE\tUPDATED\tMESSAGES\tCONTEXT ITEMS\tSESSION FILES\tFOLDER SIZE"
	if shared {
		head += "\tOWNER\tVISIBILITY"
	}
	fmt.Fprintln(tw, head)
	for _, s := range list {
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
		fmt.Fprintf(w, "More: ctxls sessions list --cursor %s\n", next)
	}
	return nil
}

// printSession is "ctxls sessions show": the session, its context and its
// messages in conversation order, a summary as its marker line.
func printSession(w io.Writer, res *api.ShowResult, sets api.Context) {
	s := res.Session
	fmt.Fprintf(w, "%s\n", termsafe.Line(s.Title))
	fmt.Fprintf(w, "  id:       %s\n  created:  %s\n  updated:  %s\n  folder:   %s\n", s.ID, when(s.CreatedAt), when(s.UpdatedAt), termsafe.Line(s.Folder))
	if s.Meta.Model != "" {
		fmt.Fprintf(w, "  model:    %s\n", termsafe.Line(s.Meta.Model))
	}
	if s.Owner != "" {
		fmt.Fprintf(w, "  owner:    %s (%s)\n", s.Owner, s.Visibility)
	}
	for name, items := range sets {
		fmt.Fprintf(w, "  %s: %s\n", termsafe.Line(name), strings.Join(termsafe.Lines(items), ", "))
	}
	printPlan(w, s.Meta.Plan)
	for _, m := range service.ConversationOrder(res.Messages) {
		if m.SummaryOf != nil {
			fmt.Fprintf(w, "\n%s\n%s\n", service.SummaryMarker(m.SummaryOf), termsafe.Text(m.Content))
			continue
		}
		status := ""
		if m.Status != api.StatusComplete {
			status = " (" + string(m.Status) + ")"
		}
		model := ""
		if m.Model != "" {
			model = " · " + termsafe.Line(m.Model)
		}
		tokens := ""
		if t := m.Usage.Text(); t != "" {
			tokens = " · " + t
		}
		fmt.Fprintf(w, "\n[%s%s · %s%s%s]\n%s\n", m.Role, model, m.CreatedAt.Local().Format("2006-01-02 15:04"), tokens, status, termsafe.Text(m.Content))
	}
}

// printPlan is the session's plan (the model's update_plan), one entry a
// line: [x] completed, [~] in progress, [ ] pending, and the priority when
// it is not medium.
func printPlan(w io.Writer, plan []api.PlanEntry) {
	if len(plan) == 0 {
		return
	}
	fmt.Fprintf(w, "  plan:\n")
	for _, e := range plan {
		mark := " "
		switch e.Status {
		case api.PlanCompleted:
			mark = "x"
		case api.PlanInProgress:
			mark = "~"
		}
		prio := ""
		if e.Priority != api.PlanMedium && e.Priority != "" {
			prio = " (" + termsafe.Line(string(e.Priority)) + ")"
		}
		fmt.Fprintf(w, "    [%s] %s%s\n", mark, termsafe.Line(e.Content), prio)
	}
}

// printHits is "ctxls sessions search" as a table.
func printHits(w io.Writer, hits []api.Hit) error {
	if len(hits) == 0 {
		fmt.Fprintln(w, "No matches.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tTITLE\tROLE\tSNIPPET")
	for _, h := range hits {
		role := string(h.Role)
		if h.MessageID == 0 {
			role = "title"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.SessionID, oneLine(h.Title, 40), role, oneLine(h.Snippet, 80))
	}
	return tw.Flush()
}
