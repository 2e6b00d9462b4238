// Package buffer keeps the exact text of the documents an editor has open
// and applies LSP incremental edits to it.
//
// A Doc stores its text as a list of chunks of a few kilobytes, each with
// its count of line breaks, so an edit scans the chunk counts to find its
// line and copies one chunk: the cost of an edit barely grows with the size
// of the document. Chunk boundaries never split a UTF-8 sequence, and no
// chunk but the last ends with "\r", so a "\r\n" pair is always counted once.
//
// Positions follow the LSP specification: lines end at "\n", "\r\n" or a lone
// "\r"; Character counts code units of the negotiated encoding (UTF-16 units,
// UTF-8 bytes or UTF-32 code points). A character offset beyond the end of its
// line means the end of the line (before its line break); a line beyond the
// last means the end of the document. An offset that falls inside a
// character (half of a surrogate pair, the middle of a UTF-8 sequence) snaps
// to the start of that character. Invalid UTF-8 bytes count as one code point
// of one byte and one UTF-16 unit each.
package buffer
