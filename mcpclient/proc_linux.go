package mcpclient

import "syscall"

// procAttr makes a server's process end with the daemon even when the
// daemon is killed (SIGKILL leaves no chance to close it): the kernel sends
// it SIGKILL when the thread that started it ends. Go's runtime does not
// end its threads while the process lives (none of ctxls's goroutines locks
// one), so that is when the daemon ends.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
