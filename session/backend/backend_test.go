package backend

import (
	"context"
	"strings"
	"testing"
)

// TestOpenRefusesOtherURLs: a store URL of another database is refused
// without repeating it (it may hold a password).
func TestOpenRefusesOtherURLs(t *testing.T) {
	if _, err := Open(context.Background(), t.TempDir(), "mysql://u:sekrit@h/db"); err == nil || strings.Contains(err.Error(), "sekrit") {
		t.Errorf("a URL of another database: %v", err)
	}
}
