//go:build !linux

package mcpclient

import "syscall"

// procAttr: outside Linux a server ends when its input closes, which
// happens when the daemon ends, also when it is killed.
func procAttr() *syscall.SysProcAttr { return nil }
