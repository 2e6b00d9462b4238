package chat

import (
	"os"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// TestMain runs up to 4 tests at once: some spend seconds waiting on a
// provider's delays and stalls, a Retry-After, a checkpoint window.
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 4)) }
