package pgtest

import (
	"os"
	"strings"
	"testing"
)

// TestCluster: a cluster starts, takes SQL, survives a crash-stop and a
// restart with its data, and is gone after the test.
func TestCluster(t *testing.T) {
	c := Start(t)
	if out, err := c.Psql(t, "", "postgres", "CREATE TABLE t (x int); INSERT INTO t VALUES (42); SELECT x FROM t;"); err != nil || out != "42" {
		t.Fatalf("psql: %q %v", out, err)
	}
	if out, err := c.Psql(t, "", "postgres", "SHOW server_version;"); err != nil || !strings.HasPrefix(out, "1") {
		t.Errorf("version: %q %v", out, err)
	}
	c.Stop(t)
	if _, err := c.Psql(t, "", "postgres", "SELECT 1;"); err == nil {
		t.Error("a stopped cluster answered")
	}
	c.Start(t)
	if out, err := c.Psql(t, "", "postgres", "SELECT x FROM t;"); err != nil || out != "42" {
		t.Errorf("after a restart: %q %v", out, err)
	}
	if !strings.Contains(c.DSN("alice", "ctxls"), "postgres://alice@/ctxls?host="+c.Dir) {
		t.Errorf("dsn %s", c.DSN("alice", "ctxls"))
	}
}

// TestLaunch: a cluster no test owns answers until stop, which removes it.
func TestLaunch(t *testing.T) {
	c, stop, err := Launch()
	Need(t, err)
	if out, err := c.Psql(t, "", "postgres", "SELECT 1;"); err != nil || out != "1" {
		t.Errorf("psql: %q %v", out, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("the cluster's directory is left: %v", err)
	}
}
