package prompts

import (
	"strings"
	"testing"
)

// TestSystemTellsFolderLayoutAndContextGuidance: whatever else the prompt
// holds (the goldens pin the bytes), it carries the session folder's layout
// in a section of its own, before the session's files, and the guidance on
// when to mark things relevant. A golden rewritten with -update cannot drop
// them unnoticed.
func TestSystemTellsFolderLayoutAndContextGuidance(t *testing.T) {
	tk := TokenizerFor("gpt-4o-mini")
	for _, in := range []Input{
		{Counter: tk, FileBudget: 100},
		{SessionFiles: []string{"a.csv"}, Context: map[string][]string{"ports": {"8080"}}, Resumed: true, Counter: tk, FileBudget: 100},
	} {
		got := System(in)
		for _, want := range []string{
			"\n## Session Folder\n",
			"- `sources/`: the user's files. Read them with `read_file(\"sources/NAME\")`; never write there.\n",
			"- `results/`: your final outputs",
			"The default.\n",
			"- `scripts/`: programs and scripts you write.\n",
			"- `data/`: intermediate data",
			"`write_file`",
			"a bare name goes to `results/`",
			// The context guidance.
			"\n## Keeping the Context\n",
			"When you start on a spec, a design document or a plan, add it to `files`",
			"When the user asks you to remember something",
			"record them in `endpoints` or `ports`",
			"when the user resumes the session, even days later, it is shown to you again",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("the system prompt lacks %q:\n%s", want, got)
			}
		}
		folder := strings.Index(got, "## Session Folder")
		if files := strings.Index(got, "## Current Session Files"); files >= 0 && files < folder {
			t.Errorf("the folder layout comes after the session's files")
		}
		if strings.Count(got, "## Session Folder") != 1 {
			t.Errorf("the folder section appears %d times", strings.Count(got, "## Session Folder"))
		}
	}
}
