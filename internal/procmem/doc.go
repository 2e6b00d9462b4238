// Package procmem holds what the daemon does about its own process's
// memory.
package procmem
