//go:build unix

package search

import (
	"golang.org/x/sys/unix"
)

// noDir: readFile opens path, not name in a folder.
const noDir = unix.AT_FDCWD

// readFile reads a regular file into buf (grown as needed) and returns its
// contents; errTooLarge (with the size) when it is larger than max,
// errNotRegular for anything else. The file is name in the open folder
// dir, or path when dir is noDir: opened relative to its folder, the
// kernel does not walk the whole path again for every file. Plain system
// calls: an os.File's set-up costs more than reading a small source file
// does.
func readFile(dir int, name, path string, buf []byte, max int64) ([]byte, int64, error) {
	if dir == noDir {
		name = path
	}
	var fd int
	var err error
	for {
		// O_NONBLOCK: a pipe put in a file's place must not hang the walk.
		fd, err = unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return buf[:0], 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf[:0], 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf[:0], 0, errNotRegular
	}
	size := st.Size
	if size > max {
		return buf[:0], size, errTooLarge
	}
	// One byte more than the size, to see a file that grew.
	if int64(cap(buf)) < size+1 {
		buf = make([]byte, 0, size+1+size/8)
	}
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			if int64(n) > max {
				return buf[:0], int64(n), errTooLarge
			}
			buf = append(buf, 0)[:0]
			buf = buf[:cap(buf)]
		}
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], 0, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	if int64(n) > max {
		return buf[:0], int64(n), errTooLarge
	}
	return buf[:n], int64(n), nil
}
