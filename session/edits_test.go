package session

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestTextHashOfParts: the hash of a text's parts is the SHA-256 of the
// whole text, across the read buffer's edges.
func TestTextHashOfParts(t *testing.T) {
	whole := strings.Repeat("héllo, wörld\n", 10_000) // past the 32 KiB buffer
	sum := sha256.Sum256([]byte(whole))
	want := hex.EncodeToString(sum[:])
	for _, parts := range [][]string{{whole}, {whole[:7], "", whole[7:40000], whole[40000:]}, {whole[:32<<10], whole[32<<10:]}} {
		if got := TextHash(parts...); got != want {
			t.Errorf("TextHash of %d parts: %s, want %s", len(parts), got, want)
		}
	}
	if empty := sha256.Sum256(nil); TextHash() != hex.EncodeToString(empty[:]) || TextHash("") != TextHash() {
		t.Error("the hash of no text")
	}
}
