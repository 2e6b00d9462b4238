package editortest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEditorsFindsCachedVersionsInOrder(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"0.12.4", "0.10.4", "0.9.10"} {
		bin := filepath.Join(dir, "nvim-"+v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "nvim"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "emacs-30.1", "bin"), 0o755) // another program's
	t.Setenv("CTXLS_EDITORS", dir)
	t.Setenv("PATH", t.TempDir()) // none on PATH
	var names []string
	for _, e := range Editors(t, "nvim") {
		names = append(names, e.Name)
		if _, err := os.Stat(e.Path); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
	}
	if got := filepath.Join(names...); got != filepath.Join("0.9.10", "0.10.4", "0.12.4") {
		t.Errorf("versions %v", names)
	}
}
