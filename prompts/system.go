package prompts

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxls/ctxls/internal/mdtext"

	"github.com/ctxls/ctxls/api"
)

//go:embed templates/base.md
var baseInstructions string

// folderLayout tells the model the session folder's layout and where to put
// what it makes.
//
//go:embed templates/folder.md
var folderLayout string

// MaxListedSessionFiles is how many session file names the prompt lists.
const MaxListedSessionFiles = 50

// File is a relevant file's content as the turn sees it.
type File struct {
	Path    string // absolute path, as shown to the model
	Content string
	Unsaved bool // the editor's buffer, with edits not yet saved
	// Lines are the lines the user selected, 1-based, both ends included
	// (zero: none).
	Lines [2]int
}

// Input is everything the system prompt is built from. It is gathered
// fresh before each turn; System is a pure function of it.
type Input struct {
	SessionFiles []string            // the files directly in the session's sources/ (not folders), sorted, hidden ones left out
	Context      map[string][]string // the relevant-context sets
	Missing      []string            // files items that do not exist
	Resumed      bool                // the first turn after ctxls.session.resume
	Env          string              // the session's envHint (Meta.EnvHint), shown first in the reminder
	// Instructions are the project's instructions files, root first
	// (InstructionsSection), at the end of the system prompt.
	Instructions []Instruction
	Relevant     []File // the relevant files whose text goes with this turn's message, in order
	// Changed are those of Relevant the conversation was shown before,
	// with other text: they are labelled as changed since.
	Changed []string
	// Shown are relevant files whose current text an earlier message of the
	// conversation already holds, unchanged: named, not repeated (see
	// chat's model view). A selection (Lines) is quoted.
	Shown []File
	// Gone are files the conversation was shown that are no longer
	// relevant.
	Gone       []string
	Withheld   []Withheld // relevant files not sent, with why
	Candidates []string   // open and recently edited files
	// Plan is the session's plan as the model last set it (update_plan),
	// shown at the end of each turn's block.
	Plan []api.PlanEntry
	// EditNotes say what the user undid or redid of the model's changes
	// to files since its last turn (session.Meta.EditNotes).
	EditNotes []string
	// ReminderShown are the reminder's parts (ReminderPart.Key) an earlier
	// message of the conversation holds as they are, left out of this
	// turn's (unless Resumed); ReminderGone the parts it held that are
	// gone. OmitCandidates leaves out the open files when an earlier
	// message holds the same list (CandidatesSection).
	ReminderShown, ReminderGone []string
	OmitCandidates              bool
	// FileBudget is the number of tokens the relevant files' contents may
	// take; Counter counts them.
	FileBudget int
	Counter    Counter
}

// Withheld is a relevant file whose content is not sent to the model.
type Withheld struct {
	Path string
	// Why completes "withheld because it ...", e.g. "looks like it holds
	// secrets; ask the user to add it by name if it is needed".
	Why string
	// Note, when set, is the whole line said of it instead (a binary
	// file's, workspace.BinaryNote).
	Note string
}

// Reasons a relevant file is withheld.
const (
	WhySecret  = "looks like it holds secrets; ask the user to add it by name if it is needed"
	WhyOutside = "is outside the workspace folders and the session folder; ask the user to add it if it is needed"
)

// The model's input is laid out so that what changes least comes first:
// providers cache the longest prefix a request repeats from the one before
// it (OpenAI automatically, Anthropic up to its breakpoints), so an edit to a
// relevant file must not change the input's beginning. The system prompt
// holds what stays the same from turn to turn (the instructions, the
// session folder's layout, the session's files); the history follows; and
// each turn's context (the reminder, the relevant files' text, what
// changed, the editor's open files) comes in a <ctxls-context> block before
// that turn's message (TurnContext, WithContext). A block stays where it
// was sent: a later turn repeats none of it, and sends only what changed
// (a changed file's current text, a file no longer relevant, a new
// reminder), so a turn's input begins with the whole of the previous one.
// docs/protocol.md has the layout and the measurements behind it.

// System renders the system prompt: base instructions, the session
// folder's layout, the session's files and the project's instructions.
func System(in Input) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(baseInstructions, "\n"))
	b.WriteString("\n\n")
	b.WriteString(strings.TrimRight(folderLayout, "\n"))
	b.WriteString("\n")
	if len(in.SessionFiles) > 0 {
		b.WriteString("\n## Current Session Files\n\n")
		b.WriteString("The following files have been uploaded to this session and are available via `read_file` in the `sources/` directory:\n\n")
		for i, name := range in.SessionFiles {
			if i == MaxListedSessionFiles {
				fmt.Fprintf(&b, "...and %d more files\n", len(in.SessionFiles)-MaxListedSessionFiles)
				break
			}
			fmt.Fprintf(&b, "- %s\n", name)
		}
		b.WriteString("\nUse these files when relevant to the user's requests. You can read them with `read_file(\"sources/filename\")`.\n")
	}
	b.WriteString(InstructionsSection(in.Instructions))
	return b.String()
}

// ReminderSection is the session context as a turn's block gives it
// (introduced as a reminder after a resume); "" when there is none.
// Parts the conversation holds as they are (ReminderShown) are left out,
// except after a resume, and parts it held that are gone are named.
func ReminderSection(in Input) string {
	var b strings.Builder
	omitted := 0
	for _, p := range ReminderParts(in.Context, in.Missing, in.Env) {
		if !in.Resumed && slices.Contains(in.ReminderShown, p.Key) {
			omitted++
			continue
		}
		b.WriteString(p.Text)
	}
	for _, key := range in.ReminderGone {
		switch key {
		case SetFiles:
			b.WriteString("Relevant files: none now\n")
		case "env":
		default:
			fmt.Fprintf(&b, "%s: empty now\n", key)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	intro := ""
	switch {
	case in.Resumed:
		intro = "The user has resumed this session. As a reminder, this is where the work stood:\n\n"
	case omitted > 0:
		intro = "What changed since shown above (the rest stands):\n\n"
	}
	return "\n## Session Context\n\n" + intro + b.String()
}

// MaxCandidates is the most open and recently edited files a turn names:
// an editor with thousands open (a script's, a project-wide replace) would
// otherwise fill the model's window with names.
const MaxCandidates = 50

// CandidatesSection lists the editor's open and recently edited files, the
// MaxCandidates most recent (in.Candidates comes most recent first) and how
// many more; "" when there are none.
func CandidatesSection(in Input) string {
	if len(in.Candidates) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Open and Recently Edited Files\n\nThe user has these files open or edited them recently; read one with `read_file` if it is relevant:\n\n")
	for _, c := range in.Candidates[:min(len(in.Candidates), MaxCandidates)] {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	if more := len(in.Candidates) - MaxCandidates; more > 0 {
		fmt.Fprintf(&b, "- and %d more, not named here (`find_files` finds any file)\n", more)
	}
	return b.String()
}

// PlanSection shows the session's plan, one entry a line with its status
// (and its priority when not medium); "" when there is none. It goes last in
// the turn's block: the plan changes from turn to turn, and what comes
// before it (the system prompt, the history as sent) stays as the
// provider's prompt cache holds it.
func PlanSection(plan []api.PlanEntry) string {
	if len(plan) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Plan\n\nYour plan for this session, as you last set it with `update_plan` (call it again to change it):\n\n")
	for _, e := range plan {
		fmt.Fprintf(&b, "- [%s] %s", e.Status, e.Content)
		if e.Priority != "" && e.Priority != api.PlanMedium {
			fmt.Fprintf(&b, " (%s priority)", e.Priority)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TurnContext renders a turn's context block: the session context (what
// changed of it), the relevant files — the text of those not shown before
// or changed since, within the budget, and the names of those the
// conversation already holds unchanged — and the editor's open files
// (unless OmitCandidates); with the tokens the files' text takes (within
// FileBudget). It is "" when there is nothing to say.
func TurnContext(in Input) (text string, fileTokens int) {
	var b strings.Builder
	b.WriteString(ReminderSection(in))
	if len(in.Relevant) > 0 || len(in.Shown) > 0 || len(in.Gone) > 0 || len(in.Withheld) > 0 {
		b.WriteString("\n## Relevant Files\n")
		budget := in.FileBudget
		for _, f := range in.Relevant {
			content, used, note := fit(f.Content, budget, in.Counter)
			budget -= used
			fileTokens += used
			label := fileLabel(f)
			if slices.Contains(in.Changed, f.Path) {
				label += " (changed since it was shown above; this is its current text)"
			}
			fence := mdtext.Fence(content)
			fmt.Fprintf(&b, "\n%s\n%s\n%s", label, fence, content)
			if !strings.HasSuffix(content, "\n") && content != "" {
				b.WriteString("\n")
			}
			b.WriteString(fence + "\n")
			if note != "" {
				b.WriteString(note + "\n")
			}
		}
		if len(in.Shown) > 0 {
			b.WriteString("\nShown above and unchanged since (their text above is current):\n")
			for _, f := range in.Shown {
				fmt.Fprintf(&b, "- %s\n", fileLabel(f))
			}
			for _, f := range in.Shown {
				if f.Lines[0] > 0 {
					if excerpt := lines(f.Content, f.Lines); excerpt != "" {
						fence := mdtext.Fence(excerpt)
						fmt.Fprintf(&b, "\nThe selected lines of %s:\n%s\n%s%s\n", f.Path, fence, excerpt, fence)
					}
				}
			}
		}
		if len(in.Gone) > 0 {
			b.WriteString("\nNo longer relevant (shown above; removed from the context, or no longer found):\n")
			for _, p := range in.Gone {
				if slices.Contains(in.Missing, p) {
					p += " (not found)"
				}
				fmt.Fprintf(&b, "- %s\n", p)
			}
		}
		for _, w := range in.Withheld {
			if w.Note != "" {
				fmt.Fprintf(&b, "\n%s\n", w.Note)
				continue
			}
			fmt.Fprintf(&b, "\n%s: withheld because it %s.\n", w.Path, w.Why)
		}
	}
	if !in.OmitCandidates {
		b.WriteString(CandidatesSection(in))
	}
	if len(in.EditNotes) > 0 {
		b.WriteString("\n## Undone Changes\n")
		for _, n := range in.EditNotes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString(PlanSection(in.Plan))
	return strings.TrimLeft(b.String(), "\n"), fileTokens
}

// fileLabel is how a relevant file is named in a turn's block.
func fileLabel(f File) string {
	label := f.Path
	if f.Unsaved {
		label += " (unsaved editor text)"
	}
	switch {
	case f.Lines[0] > 0 && f.Lines[0] == f.Lines[1]:
		label += fmt.Sprintf(" (the user selected line %d)", f.Lines[0])
	case f.Lines[0] > 0:
		label += fmt.Sprintf(" (the user selected lines %d–%d)", f.Lines[0], f.Lines[1])
	}
	return label
}

// lines is the text of lines r[0]..r[1] (1-based, both included) of
// content, each ending in a line break; "" when out of range.
func lines(content string, r [2]int) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(content, "\n") {
		if n := i + 1; n >= r[0] && n <= r[1] && l != "" {
			b.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// The tags around the turn's context in the user's message.
const (
	ContextOpen  = "<ctxls-context>\n"
	ContextClose = "</ctxls-context>\n\n"
)

// WithContext is the user's message as the model gets it: the turn's
// context first (when there is any), then the message.
func WithContext(context, message string) string {
	if context == "" {
		return message
	}
	return ContextOpen + context + ContextClose + message
}

// SplitContext undoes WithContext: the context and the user's message.
func SplitContext(content string) (context, message string) {
	if rest, ok := strings.CutPrefix(content, ContextOpen); ok {
		if i := strings.Index(rest, ContextClose); i >= 0 {
			return rest[:i], rest[i+len(ContextClose):]
		}
	}
	return "", content
}

// fit cuts content to whole lines within budget tokens and returns the kept
// text, the tokens it uses, and the note that says it was cut (never cut
// silently). It counts line by line and stops at the budget, so the cost is
// bounded by the budget, not by the size of the file.
func fit(content string, budget int, counter Counter) (string, int, string) {
	total := strings.Count(content, "\n") + 1
	if strings.HasSuffix(content, "\n") {
		total--
	}
	used, kept, off := 0, 0, 0
	for off < len(content) {
		end := strings.IndexByte(content[off:], '\n')
		if end < 0 {
			end = len(content)
		} else {
			end += off + 1
		}
		n := counter.Count(content[off:end])
		if used+n > budget {
			if kept == 0 {
				return "", 0, fmt.Sprintf("[truncated: none of its %d lines shown; the token budget for files is used up]", total)
			}
			return content[:off], used, fmt.Sprintf("[truncated: lines 1–%d of %d shown]", kept, total)
		}
		used += n
		kept++
		off = end
	}
	return content, used, ""
}
