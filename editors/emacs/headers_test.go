package emacs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxLispLines is the most lines a file of the package may have: it is
// split by concern (ctxls-chat.el, ctxls-review.el, ...), no file a
// catch-all.
const maxLispLines = 800

// TestLispHeaders checks each file of the Emacs package against the
// conventions package-lint checks (it needs MELPA, out of reach here):
// the first line names the file, with a one-line summary and the
// lexical-binding cookie; a license line, ";;; Commentary:" then
// ";;; Code:"; (provide 'FEATURE) and the closing ";;; FILE ends here".
// Only ctxls.el, the package's main file, carries Version,
// Package-Requires and URL. Each file is also under maxLispLines, and
// byte-compiled (warnings as errors) by test/ctxls-test.el's
// ctxls-test-package.
func TestLispHeaders(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.el")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	tests, err := os.ReadFile(filepath.Join("test", "ctxls-test.el"))
	if err != nil {
		t.Fatal(err)
	}
	mainOnly := regexp.MustCompile(`(?m)^;; (Version|Package-Requires|URL):`)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		feature := strings.TrimSuffix(file, ".el")
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		first := regexp.MustCompile(`^;;; ` + regexp.QuoteMeta(file) + ` --- \S.*\S  -\*- lexical-binding: t; -\*-$`)
		if !first.MatchString(lines[0]) {
			t.Errorf("%s: first line %q, want \";;; %s --- <summary>  -*- lexical-binding: t; -*-\"", file, lines[0], file)
		}
		if !regexp.MustCompile(`(?m)^;;.*SPDX-License-Identifier: MIT$`).MatchString(text) {
			t.Errorf("%s: no \";; SPDX-License-Identifier: MIT\" line", file)
		}
		commentary := strings.Index(text, "\n;;; Commentary:\n")
		code := strings.Index(text, "\n;;; Code:\n")
		if commentary < 0 || code < commentary {
			t.Errorf("%s: want a \";;; Commentary:\" line, then a \";;; Code:\" line", file)
		}
		if !strings.Contains(text, "\n(provide '"+feature+")\n") {
			t.Errorf("%s: no (provide '%s)", file, feature)
		}
		if last := lines[len(lines)-1]; last != ";;; "+file+" ends here" {
			t.Errorf("%s: last line %q, want \";;; %s ends here\"", file, last, file)
		}
		if n := len(lines); n >= maxLispLines {
			t.Errorf("%s: %d lines, want fewer than %d: split it by concern", file, n, maxLispLines)
		}
		headers := mainOnly.FindAllString(text, -1)
		if file == "ctxls.el" && len(headers) != 3 {
			t.Errorf("%s: headers %q, want Version, Package-Requires and URL", file, headers)
		}
		if file != "ctxls.el" && len(headers) > 0 {
			t.Errorf("%s: headers %q, which only the main file, ctxls.el, carries", file, headers)
		}
		if !strings.Contains(string(tests), `"`+file+`"`) {
			t.Errorf("%s is not among the files test/ctxls-test.el's ctxls-test-package byte-compiles", file)
		}
	}
}
