package prompts

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompts -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

func TestReminder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sets    map[string][]string
		missing []string
		env     string
	}{
		{"reminder_empty.golden", nil, nil, ""},
		{"reminder_full.golden", map[string][]string{
			"files":     {"/w/app/login.go", "/w/app/gone.go", "/w/app/README.md", "/w/app/old.go"},
			"applet":    {"git-diff", "path=/repo", "mode=split"},
			"ports":     {"8080", "5432"},
			"endpoints": {"GET /api/users", "POST /api/login"},
			"empty":     {},
		}, []string{"/w/app/gone.go", "/w/app/old.go"}, "vscode 1.90.0; workspace /w/app; git branch main"},
		{"reminder_one_missing.golden", map[string][]string{"files": {"/w/a.go"}}, []string{"/w/a.go"}, ""},
		{"reminder_no_files.golden", map[string][]string{"ports": {"3000"}, "custom-set": {"x"}}, nil, ""},
		{"reminder_editor_applet.golden", map[string][]string{"applet": {"editor", "file=/w/a.go", "line=42", "selection=42-50"}}, nil, "nvim 0.10.2; workspace /w"},
		{"reminder_applet_slug_only.golden", map[string][]string{"applet": {"chart"}}, nil, ""},
		{"reminder_env_only.golden", nil, nil, "lsptest; workspace /w"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Reminder(tc.sets, tc.missing, tc.env)
			golden(t, tc.name, got)
			if again := Reminder(tc.sets, tc.missing, tc.env); again != got {
				t.Error("Reminder is not deterministic")
			}
		})
	}
}

// TestReminderApplet is defect 1's regression test: the applet set is
// [slug, "key=value", ...] and the reminder shows the slug first, then its
// parameters, as the design renders it; the environment comes first.
func TestReminderApplet(t *testing.T) {
	for _, tc := range []struct {
		applet []string
		env    string
		want   string
	}{
		{[]string{"git-diff", "path=/repo", "mode=split"}, "", "Last applet: git-diff (path=/repo, mode=split)\n"},
		{[]string{"editor", "file=/w/a.go", "line=42"}, "", "Last applet: editor (file=/w/a.go, line=42)\n"},
		{[]string{"editor"}, "", "Last applet: editor\n"},
		{[]string{"editor", "file=/w/a.go"}, "vscode 1.90; workspace /w", "Environment: vscode 1.90; workspace /w\nLast applet: editor (file=/w/a.go)\n"},
	} {
		if got := Reminder(map[string][]string{"applet": tc.applet}, nil, tc.env); got != tc.want {
			t.Errorf("Reminder(applet %q, env %q) = %q, want %q", tc.applet, tc.env, got, tc.want)
		}
	}
}
