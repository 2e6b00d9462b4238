package prompts

import (
	"strings"
	"testing"
)

func TestSummaryPromptGoldens(t *testing.T) {
	golden(t, "summary_system.golden", SummarySystem(600))
	lines := []SummaryLine{
		{ID: 12, Role: "user", Text: "The importer must resume after a crash. Keep it in internal/importer."},
		{ID: 13, Role: "assistant", Text: "Let me look at the batch loop.", Calls: []string{`read_file {"path":"/home/ann/app/internal/importer/batch.go"}`}},
		{ID: 14, Role: "tool", Text: "package importer\n\nfunc Run() {}"},
		{ID: 15, Role: "assistant", Text: "Add a checkpoints table keyed by batch id; retry three times."},
		{ID: 16, Role: "system", Text: "Workspace folders changed: added /home/ann/lib"},
	}
	golden(t, "summary_input.golden", SummaryInput("", lines))
	golden(t, "summary_input_fold.golden", SummaryInput("## Goal\nA resumable importer.\n\n## Next steps\n1. Write the migration.", lines[3:]))
	golden(t, "summary_message.golden", SummaryMessage("[earlier turns summarised: the first 15 messages]", "## Goal\nA resumable importer.\n"))
}

// TestSummaryPromptKeepsWhatMatters: the instructions name each thing a
// summary must keep, and folding a previous summary in.
func TestSummaryPromptKeepsWhatMatters(t *testing.T) {
	sys := SummarySystem(400)
	for _, want := range []string{"## Goal", "## Decisions", "## Relevant files", "why it matters", "## Open questions", "## Next steps", "exact next steps", "previous summary is given, fold it in", "at most 400 words"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the summary prompt lacks %q", want)
		}
	}
	long := strings.Repeat("log line\n", 2000)
	in := SummaryInput("", []SummaryLine{{ID: 1, Role: "tool", Text: long}})
	if len(in) > MaxSummaryLine+200 || !strings.Contains(in, "…") {
		t.Errorf("a long message is not cut: %d bytes", len(in))
	}
}

// TestIsSummarySystem: the summary prompt is recognised whatever its
// number of words, and nothing else is.
func TestIsSummarySystem(t *testing.T) {
	for _, n := range []int{1, 750, 12000} {
		if !IsSummarySystem(SummarySystem(n)) {
			t.Errorf("SummarySystem(%d) not recognised", n)
		}
	}
	for _, s := range []string{"", TitleSystem(), SummarySystem(10) + " more", strings.Replace(SummarySystem(10), "10", "ten", 1)} {
		if IsSummarySystem(s) {
			t.Errorf("%.60q taken for a summary prompt", s)
		}
	}
}
