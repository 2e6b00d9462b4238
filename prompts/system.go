package prompts

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"strings"
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
	Relevant     []File              // the files set and the turn's files, in order
	Changed      []string            // relevant files whose content changed since they were last sent
	Withheld     []Withheld          // relevant files not sent, with why
	Candidates   []string            // open and recently edited files
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
// the turn's context (the reminder, the relevant files' current text, what
// changed, the editor's open files) comes last, in a <ctxls-context> block
// before the user's message (Context), rebuilt every turn and never
// stored.

// System renders the system prompt: base instructions, the session
// folder's layout and the session's files.
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
	return b.String()
}

// TurnContext renders the turn's context: the session's context
// (introduced as a reminder after a resume), the relevant files' contents
// within the budget and what changed since the last turn, and the editor's
// candidates; with the tokens the files' contents take (within FileBudget).
// It is "" when there is nothing to say.
func TurnContext(in Input) (text string, fileTokens int) {
	var b strings.Builder
	if reminder := Reminder(in.Context, in.Missing, in.Env); reminder != "" {
		b.WriteString("\n## Session Context\n\n")
		if in.Resumed {
			b.WriteString("The user has resumed this session. As a reminder, this is where the work stood:\n\n")
		}
		b.WriteString(reminder)
	}
	if len(in.Relevant) > 0 || len(in.Withheld) > 0 {
		b.WriteString("\n## Relevant Files\n")
		if len(in.Changed) > 0 {
			names := make([]string, len(in.Changed))
			for i, c := range in.Changed {
				names[i] = filepath.Base(c)
			}
			fmt.Fprintf(&b, "\nChanged since the last turn: %s\n", strings.Join(names, ", "))
		}
		budget := in.FileBudget
		for _, f := range in.Relevant {
			content, used, note := fit(f.Content, budget, in.Counter)
			budget -= used
			fileTokens += used
			label := f.Path
			if f.Unsaved {
				label += " (unsaved editor text)"
			}
			if f.Lines[0] > 0 {
				label += fmt.Sprintf(" (the user selected lines %d–%d)", f.Lines[0], f.Lines[1])
				if f.Lines[0] == f.Lines[1] {
					label = strings.Replace(label, fmt.Sprintf("lines %d–%d", f.Lines[0], f.Lines[1]), fmt.Sprintf("line %d", f.Lines[0]), 1)
				}
			}
			fence := fenceFor(content)
			fmt.Fprintf(&b, "\n%s\n%s\n%s", label, fence, content)
			if !strings.HasSuffix(content, "\n") && content != "" {
				b.WriteString("\n")
			}
			b.WriteString(fence + "\n")
			if note != "" {
				b.WriteString(note + "\n")
			}
		}
		for _, w := range in.Withheld {
			fmt.Fprintf(&b, "\n%s: withheld because it %s.\n", w.Path, w.Why)
		}
	}
	if len(in.Candidates) > 0 {
		b.WriteString("\n## Open and Recently Edited Files\n\nThe user has these files open or edited them recently; read one with `read_file` if it is relevant:\n\n")
		for _, c := range in.Candidates {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	return strings.TrimLeft(b.String(), "\n"), fileTokens
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

// fenceFor returns a backtick fence longer than any run inside content.
func fenceFor(content string) string {
	longest, run := 0, 0
	for _, r := range content {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
