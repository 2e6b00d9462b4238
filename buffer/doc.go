// Package buffer keeps the exact text of the documents an editor has open
// and applies LSP incremental edits to it.
//
// A Doc stores its text as chunks of up to 8 KB (cut at about 4 KB), each
// with its count of line breaks, grouped into blocks of up to 64 chunks. A
// Fenwick tree over the line counts of the blocks finds the block of a line
// in O(log blocks), a scan of at most 64 counts its chunk. Inside the chunk
// an edit counts line breaks 512 bytes at a time to find its line, changes
// the chunk in place and recounts only the bytes it replaced. An edit that
// cuts chunks anew (a chunk outgrowing 8 KB, a range across chunks, a paste)
// splices the chunks of one block; only a block outgrowing 64 chunks or a
// range across blocks regroups blocks and rebuilds the tree, in O(blocks).
// So the cost of an edit barely grows with the size of the document
// (BenchmarkEdits, BenchmarkTyping and BenchmarkCutPaste compare 100 KB with
// 10 MB). Chunks are allocated to size and an edited chunk gets an eighth
// more room to type, so the text costs little more memory than its length
// (BenchmarkMemory200x100KB).
//
// Chunk boundaries never split a UTF-8 sequence, and no chunk but the last
// ends with "\r", so a "\r\n" pair is always counted once.
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
