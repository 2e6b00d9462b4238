package chat

import (
	"os"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// TestMain runs up to 4 tests at once: some spend seconds in a provider's
// retries (the 5xx cases wait 7 s between theirs).
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 4)) }
