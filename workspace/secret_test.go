package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretName: every kind of credential file on the list is known by
// its name (in any case, wherever it is), and ordinary files are not.
func TestSecretName(t *testing.T) {
	for _, p := range []string{
		// dotenv
		"/w/.env", "/w/app/.env.local", "/w/.env.production", "/w/.ENV", "/w/.envrc",
		// package registries
		"/w/.npmrc", "/home/u/.pypirc", "/home/u/.gem/credentials", "/home/u/.cargo/credentials.toml",
		"/home/u/.cargo/credentials",
		// git, HTTP, databases
		"/home/u/.git-credentials", "/home/u/.netrc", `/home/u/_netrc`, "/home/u/.pgpass", "/home/u/.my.cnf",
		"/w/.htpasswd", "/home/u/.vault-token",
		// private keys, certificates' stores
		"/w/server.pem", "/w/tls/server.KEY", "/home/u/.ssh/id_rsa", "/home/u/.ssh/id_ed25519",
		"/home/u/.ssh/id_ecdsa_sk", "/w/id_dsa", "/w/cert.p12", "/w/cert.pfx", "/w/app.jks",
		"/w/release.keystore", "/w/putty.ppk", "/home/u/.ssh/deploy_key_for_ci", "/home/u/.gnupg/private-keys-v1.d",
		// cloud command lines
		"/home/u/.aws/credentials", "/home/u/.aws/config", "/w/credentials.json",
		"/home/u/.config/gcloud/application_default_credentials.json", "/home/u/.config/gcloud/credentials.db",
		"/home/u/.config/gcloud/access_tokens.db", "/home/u/.azure/msal_token_cache.json",
		"/home/u/.azure/accessTokens.json", "/home/u/.docker/config.json", "/home/u/.kube/config",
		"/home/u/.config/gh/hosts.yml",
		// infrastructure state
		"/w/infra/terraform.tfstate", "/w/infra/terraform.tfstate.backup",
	} {
		if !SecretName(filepath.FromSlash(p)) {
			t.Errorf("%s is not known to hold secrets", p)
		}
	}
	for _, p := range []string{
		"/w/main.go", "/w/environment.go", "/w/keys.go", "/w/monkey", "/w/config.json", "/w/.config",
		"/w/config", "/w/hosts.yml", "/w/docs/credentials.md", "/w/.npmignore", "/w/pem.go",
		"/w/.github/workflows/ci.yml", "/w/infra/main.tf", "/w/.dockerignore", "/w/kube/config.go",
	} {
		if SecretName(filepath.FromSlash(p)) {
			t.Errorf("%s is taken for a secret", p)
		}
	}
}

// TestSecretFilesAllKnown: an example of every entry of the list is known
// (a "*" standing for "x", a folder's entry put under /w).
func TestSecretFilesAllKnown(t *testing.T) {
	for _, f := range secretFiles {
		p := filepath.Join("/w", filepath.FromSlash(strings.ReplaceAll(f, "*", "x")))
		if !SecretName(p) || !SecretName(strings.ToUpper(p)) {
			t.Errorf("%s (for %q) is not known to hold secrets", p, f)
		}
	}
}
