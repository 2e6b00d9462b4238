package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ctxls/ctxls/internal/termsafe"
	"github.com/ctxls/ctxls/service"
)

// cliEdits is "ctxls chat"'s way with the model's edits: the files are the
// disk's; in the ask mode each edit's diff is shown on the terminal and
// accepted or rejected there (with no terminal it is rejected, and the
// user told how to let edits through); an accepted edit is written to the
// file.
type cliEdits struct {
	errOut io.Writer
	asker  *toolAsker
}

func (cliEdits) Read(context.Context, string, string) (string, string, *int32, bool) {
	return "", "", nil, false
}

func (e cliEdits) Review(ctx context.Context, r service.EditRequest) (service.Decision, error) {
	if e.asker.tty == nil {
		fmt.Fprintf(e.errOut, "[the edit of %s was rejected: there is no terminal to review it on; run with --edits auto to apply edits unreviewed]\n", termsafe.Line(r.Path))
		return service.RejectOnce, errors.New("no terminal to review on")
	}
	verb := "edit"
	if r.Create {
		verb = "create"
	}
	// The diff keeps its lines; nothing in them can move the cursor.
	s, err := e.asker.prompt(ctx, fmt.Sprintf("%s\nctxls: the model wants to %s %s (%s).\n  [y] accept   [a] accept all in this turn   [n] reject: ",
		termsafe.Text(r.Diff), verb, termsafe.Line(r.Path), termsafe.Line(r.Summary)))
	if err != nil {
		return service.RejectOnce, err
	}
	switch s {
	case "y", "yes":
		return service.AllowOnce, nil
	case "a", "all":
		return service.AllowAlways, nil
	}
	return service.RejectOnce, nil
}

func (cliEdits) Apply(_ context.Context, r service.EditRequest) (service.EditResult, error) {
	return service.WriteToDisk(r)
}
