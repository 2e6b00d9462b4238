// Package pgtest starts a throwaway PostgreSQL cluster for a test: initdb
// into a temporary directory and postgres listening only on a Unix socket
// there, run as an unprivileged user when the test runs as root
// (PostgreSQL refuses to run as root). It needs Debian's postgresql
// package (or any initdb and pg_ctl on PATH); without it the test is
// skipped, and fails when the environment variable CI is set.
package pgtest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Cluster is a running PostgreSQL.
type Cluster struct {
	Dir       string // the cluster's directory; its socket is here too
	Superuser string // the role initdb made, with trust authentication
	bin       string // the directory of initdb, pg_ctl, postgres
	cred      *syscall.Credential
}

// DSN is a connection string for database db as role (Superuser when "").
func (c *Cluster) DSN(role, db string) string {
	if role == "" {
		role = c.Superuser
	}
	return fmt.Sprintf("postgres://%s@/%s?host=%s&sslmode=disable", role, db, c.Dir)
}

// ErrNotInstalled is the error Launch returns (wrapped) when initdb and
// pg_ctl are nowhere to be found.
var ErrNotInstalled = errors.New("PostgreSQL is not installed (apt-get install postgresql)")

// Start starts a cluster that is stopped and removed when the test ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, stop, err := Launch()
	if err != nil {
		Need(t, err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// Launch starts a cluster that belongs to no one test, for the tests of a
// test binary to share: stop stops it and removes its directory (call it
// from TestMain once m.Run returns). Starting one takes a second or two.
// When PostgreSQL is not installed the error wraps ErrNotInstalled; Need
// turns an error into a skip or a failure.
func Launch() (c *Cluster, stop func() error, err error) {
	bin, err := binDir()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	// Not t.TempDir: its parents are private to the test's user, and the
	// server may run as another.
	dir, err := os.MkdirTemp("", "ctxls-pg-")
	if err != nil {
		return nil, nil, err
	}
	c = &Cluster{Dir: dir, Superuser: "postgres", bin: bin}
	stop = func() error {
		err := c.stop()
		return errors.Join(err, os.RemoveAll(dir))
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			return nil, nil, err
		}
		c.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, nil, err
		}
	}
	if err := c.initdb(); err != nil {
		return nil, nil, err
	}
	if err := c.start(); err != nil {
		return nil, nil, err
	}
	return c, stop, nil
}

// initArgs are initdb's arguments after the data directory.
var initArgs = []string{"-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"}

// initdb makes the cluster's data directory: a copy of a template cluster
// that initdb made once for every test process of this user (in
// os.TempDir(), keyed by the PostgreSQL binaries and initdb's arguments),
// made first when there is none. A copy takes a fifth of initdb's CPU
// (0.3 against 1.2 CPU-seconds here), and the suites start a dozen
// clusters.
func (c *Cluster) initdb() error {
	data := filepath.Join(c.Dir, "data")
	owner := -1
	if c.cred != nil {
		owner = int(c.cred.Uid)
	}
	sum := sha256.Sum256([]byte(fmt.Sprint(c.bin, initArgs, owner)))
	template := filepath.Join(os.TempDir(), fmt.Sprintf("ctxls-pg-template-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6])))
	if _, err := os.Stat(filepath.Join(template, "data", "PG_VERSION")); err != nil {
		// Made aside and renamed into place: another process may be
		// making it too (the first rename wins, the other's is removed).
		tmp, err := os.MkdirTemp(os.TempDir(), "ctxls-pg-template-new-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if c.cred != nil {
			if err := os.Chown(tmp, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				return err
			}
		}
		maker := *c
		maker.Dir = tmp
		if out, err := maker.run("initdb", append([]string{"-D", filepath.Join(tmp, "data")}, initArgs...)...); err != nil {
			return fmt.Errorf("initdb: %v\n%s", err, out)
		}
		if err := os.Rename(tmp, template); err != nil {
			if _, serr := os.Stat(filepath.Join(template, "data", "PG_VERSION")); serr != nil {
				return err
			}
		}
	}
	// cp -a keeps the owner (the server's user) and the modes initdb set.
	if out, err := exec.Command("cp", "-a", filepath.Join(template, "data"), data).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the template cluster: %v\n%s", err, out)
	}
	return nil
}

// Need ends a test that needs PostgreSQL when err, from Launch, is not nil:
// it is skipped when PostgreSQL is not installed, except when the
// environment variable CI is set, and fails otherwise.
func Need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	t.Fatal(err)
}

// Start starts the server (again, after Stop).
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
}

func (c *Cluster) start() error {
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories=%s -c fsync=off -c max_connections=100", c.Dir)
	if out, err := c.run("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-l", filepath.Join(c.Dir, "log"), "-o", opts, "-w", "-t", "30", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server at once (as a crash would, without a checkpoint).
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if err := c.stop(); err != nil {
		t.Error(err)
	}
}

func (c *Cluster) stop() error {
	if _, err := os.Stat(filepath.Join(c.Dir, "data", "postmaster.pid")); err != nil {
		return nil // not running
	}
	if out, err := c.run("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// Psql runs SQL through psql as role on database db and returns its output.
func (c *Cluster) Psql(t testing.TB, role, db, sql string) (string, error) {
	t.Helper()
	if role == "" {
		role = c.Superuser
	}
	out, err := exec.Command("psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", c.Dir, "-U", role, "-d", db, "-c", sql).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (c *Cluster) run(tool string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, tool), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd.CombinedOutput()
}

// binDir finds initdb and pg_ctl: Debian keeps them in
// /usr/lib/postgresql/VERSION/bin (the newest wins), others on PATH.
func binDir() (string, error) {
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(versions, func(i, j int) bool { return version(versions[i]) > version(versions[j]) })
	if len(versions) > 0 {
		return filepath.Dir(versions[0]), nil
	}
	p, err := exec.LookPath("initdb")
	if err != nil {
		return "", err
	}
	return filepath.Dir(p), nil
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// unprivileged is the user the server runs as when the tests run as root:
// postgres (which Debian's package makes), else nobody.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("no unprivileged user (postgres or nobody) to run PostgreSQL as")
}
