package nvim_test

import (
	"os"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// TestMain runs up to 6 tests at once: each waits on a headless Neovim of
// its own (its own HOME and workspace).
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 6)) }
