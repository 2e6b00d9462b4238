package acp_test

import (
	"os"
	"testing"

	"github.com/ctxls/ctxls/internal/testmain"
)

// TestMain runs up to 8 tests at once: they spend their time waiting on the
// agents they start and on the provider's retries.
func TestMain(m *testing.M) { os.Exit(testmain.Run(m, 8)) }
