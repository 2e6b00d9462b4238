package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// onSystemFS reports whether an open file is on a file system the kernel
// makes up (proc, sysfs, devtmpfs, …), wherever it is mounted: a proc
// mounted at /host/proc is /proc all the same.
func onSystemFS(f *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return false
	}
	switch st.Type {
	case unix.PROC_SUPER_MAGIC, unix.SYSFS_MAGIC, unix.DEVPTS_SUPER_MAGIC, unix.DEBUGFS_MAGIC,
		unix.SECURITYFS_MAGIC, unix.TRACEFS_MAGIC, unix.BPF_FS_MAGIC, unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		return true
	}
	return false
}
