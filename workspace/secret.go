package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// secretFiles are the names of files that hold credentials: the one list
// every tool (read_file, the edit tools, grep, find_files,
// list_directory) and the turn's relevant files go by. A name is matched
// against a path's last element, or with "folder/" before it against its
// last two, in any case (Windows names _netrc so, and folders differ in
// case across systems): "name" exactly, "*suffix", "prefix*", "folder/*"
// any file in such a folder.
//
// The list is of files whose very purpose is to hold a secret, the ones
// gitleaks, GitHub's secret scanning and the editors' "sensitive files"
// lists name, so that withholding them costs the model nothing it needs.
// Left out on purpose: *.tfvars and secrets.yml (often plain settings,
// committed and edited by hand); *.asc and *.gpg (mostly public keys and
// signatures, or encrypted); .ssh/config and known_hosts would be caught
// by .ssh/*, which is meant (a private key there need not be named
// id_*). A file holding a private key is also known by its text
// (HasPrivateKey), whatever its name.
var secretFiles = []string{
	// dotenv files and direnv's: exported API keys and passwords.
	".env", ".env.*", ".envrc",
	// Package registries' tokens: npm and yarn, PyPI, RubyGems, Cargo.
	".npmrc", ".pypirc", ".gem/credentials", ".cargo/credentials", ".cargo/credentials.toml",
	// git's credential store, HTTP and FTP logins (curl, git, ftp), the
	// PostgreSQL and MySQL clients' passwords, Apache's password hashes,
	// Vault's token.
	".git-credentials", ".netrc", "_netrc", ".pgpass", ".my.cnf", ".htpasswd", ".vault-token",
	// Private keys and the stores holding them: PEM, OpenSSH (id_rsa and
	// family, and any file in .ssh or .gnupg), PKCS#12, Java keystores,
	// PuTTY's.
	"*.pem", "*.key", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.p12", "*.pfx",
	"*.jks", "*.keystore", "*.ppk", ".ssh/*", ".gnupg/*",
	// Cloud command lines: AWS (config may hold keys too), Google Cloud's
	// application default credentials and its token databases, Azure's
	// token caches, the credentials a service account downloads as
	// credentials.json.
	"credentials", "credentials.json", ".aws/config", "gcloud/application_default_credentials.json",
	"gcloud/credentials.db", "gcloud/access_tokens.db", ".azure/*",
	// Registries' and clusters' logins: Docker, kubectl, GitHub's gh.
	".docker/config.json", ".kube/config", "gh/hosts.yml",
	// Terraform's state holds every resource's secrets in plain text.
	"*.tfstate", "*.tfstate.backup",
}

// secretRules is secretFiles sorted for a fast look-up: SecretName runs for
// every file a search walks.
type secretRules struct {
	exact          map[string]bool
	prefix, suffix []string
	inFolder       map[string][]string // folder → its names ("*": any)
}

var rules = sync.OnceValue(func() *secretRules {
	r := &secretRules{exact: map[string]bool{}, inFolder: map[string][]string{}}
	for _, f := range secretFiles {
		f = strings.ToLower(f)
		switch dir, name, ok := strings.Cut(f, "/"); {
		case ok:
			r.inFolder[dir] = append(r.inFolder[dir], name)
		case strings.HasPrefix(f, "*"):
			r.suffix = append(r.suffix, f[1:])
		case strings.HasSuffix(f, "*"):
			r.prefix = append(r.prefix, f[:len(f)-1])
		default:
			r.exact[f] = true
		}
	}
	return r
})

// SecretName reports whether a file's name says it holds secrets (see
// secretFiles).
func SecretName(path string) bool {
	r := rules()
	name := strings.ToLower(filepath.Base(path))
	if r.exact[name] {
		return true
	}
	for _, s := range r.suffix {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	for _, p := range r.prefix {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, n := range r.inFolder[strings.ToLower(parentName(path))] {
		if n == "*" || n == name {
			return true
		}
	}
	return false
}

// parentName is the name of the folder holding path ("" when none), read
// off the path without a copy.
func parentName(path string) string {
	sep := func(r rune) bool { return os.IsPathSeparator(uint8(r)) }
	i := strings.LastIndexFunc(path, sep)
	if i < 0 {
		return ""
	}
	dir := path[:i]
	return dir[strings.LastIndexFunc(dir, sep)+1:]
}

// LooksSecret reports whether a file looks like it holds secrets, by name
// or by a private-key header in its content ("" when not read).
func LooksSecret(path, content string) bool {
	return SecretName(path) || hasPrivateKey(content)
}

// HasPrivateKey reports whether data holds a private key's header.
func HasPrivateKey(data []byte) bool {
	return hasPrivateKey(unsafe.String(unsafe.SliceData(data), len(data)))
}

// hasPrivateKey reports whether text holds "PRIVATE KEY-----". It looks for
// "KEY-----" first: an upper-case K is rare in code, where the P of
// "PRIVATE" is on every line that prints, so the search reads the text at
// the speed of memory.
func hasPrivateKey(text string) bool {
	for {
		i := strings.Index(text, "KEY-----")
		if i < 0 {
			return false
		}
		if i >= 8 && text[i-8:i] == "PRIVATE " {
			return true
		}
		text = text[i+8:]
	}
}
