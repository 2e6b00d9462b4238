//go:build !unix

package search

import (
	"bytes"
	"io"
	"os"
)

// noDir: readFile opens path, not name in a folder.
const noDir = -1

// readFile reads the regular file at path into buf (grown as needed) and
// returns its contents; errTooLarge (with the size) when it is larger than
// max, errNotRegular for anything else. (dir and name serve the Unix
// version.)
func readFile(dir int, name, path string, buf []byte, max int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return buf[:0], 0, err
	}
	if !fi.Mode().IsRegular() {
		return buf[:0], 0, errNotRegular
	}
	if fi.Size() > max {
		return buf[:0], fi.Size(), errTooLarge
	}
	b := bytes.NewBuffer(buf[:0])
	n, err := io.Copy(b, io.LimitReader(f, max+1))
	if err != nil {
		return buf[:0], 0, err
	}
	if n > max {
		return buf[:0], n, errTooLarge
	}
	return b.Bytes(), n, nil
}
