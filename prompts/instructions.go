package prompts

import (
	"fmt"
	"strings"

	"github.com/ctxls/ctxls/internal/mdtext"
)

// Instruction is a project instructions file (AGENTS.md, or at a workspace
// root without one CLAUDE.md or .github/copilot-instructions.md) as a turn
// gives it to the model.
type Instruction struct {
	Path    string // absolute
	Content string // what is given: the whole text, or its first lines
	// Unsaved: the editor's text, with edits not yet saved. It is not said
	// in the model's input (saving the file must not change the input's
	// cached prefix); clients are told.
	Unsaved bool
	// Size is the whole text's length in bytes; Cut says what was left out
	// ("" when nothing was).
	Size int
	Cut  string
}

// InstructionsSection renders the project instructions for the end of the
// system prompt, each file under its path, listed from the workspace root
// down (what is the same for every turn comes first); "" when there are
// none. It is part of the input's stable prefix, so it depends on nothing
// but the files' paths and text.
func InstructionsSection(ins []Instruction) string {
	if len(ins) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Project Instructions\n\n")
	b.WriteString("The user's project keeps these instructions for coding agents (AGENTS.md files and the like). Follow them. ")
	b.WriteString("They are listed from the workspace root down: where two disagree, the one in the folder nearest to the file concerned takes precedence, and what the user asks in the conversation takes precedence over all of them.\n")
	for _, in := range ins {
		fmt.Fprintf(&b, "\nInstructions from %s:\n", in.Path)
		fence := mdtext.Fence(in.Content)
		b.WriteString(fence + "\n" + in.Content)
		if in.Content != "" && !strings.HasSuffix(in.Content, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(fence + "\n")
		if in.Cut != "" {
			fmt.Fprintf(&b, "[%s]\n", in.Cut)
		}
	}
	return b.String()
}
