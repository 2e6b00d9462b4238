package cli_test

import (
	"os"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// TestMain runs up to 8 tests at once: they spend their time waiting on the
// ctxls processes they start (and one on its 10 s title wait).
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 8)) }
