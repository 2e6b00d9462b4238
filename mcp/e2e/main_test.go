package e2e

import (
	"os"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// TestMain runs up to 4 tests at once: they spend their time waiting on the
// Node processes they start (the reference servers, the Inspector).
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 4)) }
