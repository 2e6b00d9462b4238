package prompts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
)

func TestSystemGolden(t *testing.T) {
	tk := TokenizerFor("gpt-4o-mini")
	names := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("file%02d.csv", i))
		}
		return out
	}
	long := strings.Repeat("line of a long file with some words in it\n", 400)
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"system_empty.golden", Input{Counter: tk, FileBudget: 1000}},
		{"system_3_files.golden", Input{SessionFiles: []string{"data.csv", "report.pdf", "notes.md"}, Counter: tk, FileBudget: 1000}},
		{"system_55_files.golden", Input{SessionFiles: names(55), Counter: tk, FileBudget: 1000}},
		{"system_env_applet.golden", Input{Env: "vscode 1.90.0; workspace /w/app; git branch main", Resumed: true, Context: map[string][]string{"applet": {"editor", "file=/w/app/main.go", "line=12"}}, Counter: tk, FileBudget: 1000}},
		{"system_full.golden", Input{
			SessionFiles: []string{"data.csv"},
			Context:      map[string][]string{"files": {"/w/app/main.go", "/w/app/gone.go"}, "ports": {"8080"}},
			Missing:      []string{"/w/app/gone.go"},
			Resumed:      true,
			Relevant: []File{
				{Path: "/w/app/main.go", Content: "package main\n\nfunc main() { println(\"unsaved\") }\n", Unsaved: true},
				{Path: "/w/app/doc.md", Content: "```go\nx\n```\n"},
				{Path: "/w/app/big.txt", Content: long},
			},
			Changed:    []string{"/w/app/main.go"},
			Withheld:   []Withheld{{Path: "/w/app/.env", Why: WhySecret}, {Path: "/home/ann/notes.txt", Why: WhyOutside}},
			Candidates: []string{"/w/app/util.go", "/w/app/README.md"},
			FileBudget: 300,
			Counter:    tk,
		}},
		// A later turn: one file changed, two shown before and unchanged
		// (one with a selection), one no longer relevant; the reminder and
		// the open files as the conversation already has them.
		{"system_later_turn.golden", Input{
			Context:        map[string][]string{"files": {"/w/app/main.go", "/w/app/util.go", "/w/app/doc.md"}, "ports": {"8080", "9090"}},
			ReminderShown:  []string{"files"},
			ReminderGone:   []string{"endpoints"},
			Relevant:       []File{{Path: "/w/app/main.go", Content: "package main\n\nfunc main() {}\n", Unsaved: true}},
			Changed:        []string{"/w/app/main.go"},
			Shown:          []File{{Path: "/w/app/util.go", Content: "package main\n\nfunc a() {}\nfunc b() {}\n", Lines: [2]int{3, 4}}, {Path: "/w/app/doc.md", Content: "# Doc\n"}},
			Gone:           []string{"/w/app/old.go"},
			Candidates:     []string{"/w/app/util.go"},
			OmitCandidates: true,
			FileBudget:     300,
			Counter:        tk,
		}},
		// A later turn of a session with a plan: the plan ends the block,
		// after the open files; the system prompt is the one without it.
		{"system_plan.golden", Input{
			Context:       map[string][]string{"files": {"/w/app/main.go"}},
			ReminderShown: []string{"files"},
			Candidates:    []string{"/w/app/util.go"},
			Plan: []api.PlanEntry{
				{Content: "Find where the redirect is issued", Status: api.PlanCompleted, Priority: api.PlanHigh},
				{Content: "Fix the double redirect", Status: api.PlanInProgress, Priority: api.PlanMedium},
				{Content: "Add a test", Status: api.PlanPending, Priority: api.PlanLow},
			},
			FileBudget: 300,
			Counter:    tk,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The golden holds the system prompt, then the turn's context
			// as the user's message carries it.
			ctx, _ := TurnContext(tc.in)
			got := System(tc.in) + "\n=== the user's message ===\n" + WithContext(ctx, "the question")
			golden(t, tc.name, got)
			ctx2, _ := TurnContext(tc.in)
			if System(tc.in)+"\n=== the user's message ===\n"+WithContext(ctx2, "the question") != got {
				t.Error("System and TurnContext are not deterministic")
			}
			if c, q := SplitContext(WithContext(ctx, "the question")); c != ctx || q != "the question" {
				t.Errorf("SplitContext: %q %q", c, q)
			}
		})
	}
}

// TestPlanLeavesTheSystemPromptAlone: the plan goes only into the turn's
// block, so the system prompt (the start of the cached prefix) is the same
// with a plan and without; no plan, no section.
func TestPlanLeavesTheSystemPromptAlone(t *testing.T) {
	in := Input{Context: map[string][]string{"files": {"/w/a.go"}}, Counter: TokenizerFor("gpt-4o"), FileBudget: 100}
	with := in
	with.Plan = []api.PlanEntry{{Content: "Do it", Status: api.PlanPending, Priority: api.PlanMedium}}
	if System(in) != System(with) {
		t.Error("the plan changed the system prompt")
	}
	a, _ := TurnContext(in)
	b, _ := TurnContext(with)
	if strings.Contains(a, "## Plan") || !strings.HasPrefix(b, a) || !strings.HasSuffix(b, "\n## Plan\n\nYour plan for this session, as you last set it with `update_plan` (call it again to change it):\n\n- [pending] Do it\n") {
		t.Errorf("without a plan:\n%s\nwith:\n%s", a, b)
	}
}

func TestFitTruncatesVisibly(t *testing.T) {
	tk := TokenizerFor("gpt-4")
	content := strings.Repeat("alpha beta gamma\n", 100)
	got, used, note := fit(content, 50, tk)
	if tk.Count(got) > 50 || used != tk.Count(got) || !strings.HasPrefix(note, "[truncated: lines 1–") || !strings.HasSuffix(note, " of 100 shown]") {
		t.Errorf("fit: %d tokens (%d reported), note %q", tk.Count(got), used, note)
	}
	if got, _, note := fit("short\n", 50, tk); got != "short\n" || note != "" {
		t.Errorf("no cut: %q %q", got, note)
	}
	if got, used, note := fit("a\nb\n", 0, tk); got != "" || used != 0 || note != "[truncated: none of its 2 lines shown; the token budget for files is used up]" {
		t.Errorf("no budget: %q %d %q", got, used, note)
	}
}

// TestCandidatesBounded: thousands of open files are named up to
// MaxCandidates, most recent first, and the rest counted.
func TestCandidatesBounded(t *testing.T) {
	var files []string
	for i := range 3000 {
		files = append(files, fmt.Sprintf("/w/src/file%04d.go", i))
	}
	got := CandidatesSection(Input{Candidates: files})
	if !strings.Contains(got, "- /w/src/file0000.go\n") || !strings.Contains(got, fmt.Sprintf("- /w/src/file%04d.go\n", MaxCandidates-1)) {
		t.Errorf("the most recent are not named:\n%s", got)
	}
	if strings.Contains(got, fmt.Sprintf("file%04d.go", MaxCandidates)) || !strings.Contains(got, fmt.Sprintf("- and %d more", 3000-MaxCandidates)) {
		t.Errorf("past %d, files named or not counted:\n%s", MaxCandidates, got)
	}
	if few := CandidatesSection(Input{Candidates: files[:3]}); strings.Contains(few, "more") || strings.Count(few, "\n- ") != 3 {
		t.Errorf("three files:\n%s", few)
	}
}
