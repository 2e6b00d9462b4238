package cli

import (
	"log/slog"

	"github.com/ctxls/ctxls/internal/procmem"
)

// releaseStartupPages returns the doors' service.Config.Opened for a
// daemon: once its store has opened, start-up is over, and the pages of
// the binary that package initialisers and the open touched go back to
// the kernel (procmem.ReleaseImage). What the daemon uses again while it
// waits and answers comes back from the file on first touch.
func releaseStartupPages(log *slog.Logger) func(error) {
	return func(error) {
		n, err := procmem.ReleaseImage()
		if err != nil {
			log.Debug("start-up pages not released", "err", err)
			return
		}
		log.Debug("start-up pages released", "mappedKB", n>>10)
	}
}
