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
	}{
		{"reminder_empty.golden", nil, nil},
		{"reminder_full.golden", map[string][]string{
			"files":     {"/w/app/login.go", "/w/app/gone.go", "/w/app/README.md", "/w/app/old.go"},
			"applet":    {"chart type=bar", "weather city=Paris units=metric"},
			"ports":     {"8080", "5432"},
			"endpoints": {"GET /api/users", "POST /api/login"},
			"empty":     {},
		}, []string{"/w/app/gone.go", "/w/app/old.go"}},
		{"reminder_one_missing.golden", map[string][]string{"files": {"/w/a.go"}}, []string{"/w/a.go"}},
		{"reminder_no_files.golden", map[string][]string{"ports": {"3000"}, "custom-set": {"x"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Reminder(tc.sets, tc.missing)
			golden(t, tc.name, got)
			if again := Reminder(tc.sets, tc.missing); again != got {
				t.Error("Reminder is not deterministic")
			}
		})
	}
}
