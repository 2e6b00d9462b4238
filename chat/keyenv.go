package chat

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// provider.apiKeyEnv names the variable whose value goes to the provider's
// base URL as a bearer token, and a repository's settings can set it (a
// VS Code workspace's .vscode/settings.json, a .nvim.lua, a .dir-locals.el):
// it is honoured only when it looks like a model provider's key, so a
// repository cannot have, say, AWS_SECRET_ACCESS_KEY sent to a URL it
// chose. The daemon cannot tell which settings came from the user, so the
// check is on the name: NAME_API_KEY, NAME_KEY or NAME_TOKEN, and not a
// well-known secret of something else (a cloud's, a forge's, a CI's, a
// package registry's, ctxls's own).

var keyEnvShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Z][A-Z0-9_]*_(API_KEY|KEY|TOKEN)$`)
})

// notProviderKeyPrefixes are the prefixes of variables that hold other
// services' secrets.
var notProviderKeyPrefixes = []string{
	"AWS_", "ARM_", "AZURE_STORAGE_", "GOOGLE_OAUTH_", "GCP_", "CLOUDSDK_",
	"GITHUB_", "GH_", "GITLAB_", "GL_", "BITBUCKET_", "GITEA_",
	"CI_", "ACTIONS_", "BUILDKITE_", "CIRCLE_", "TRAVIS_", "DRONE_", "JENKINS_",
	"NPM_", "NODE_AUTH_", "PYPI_", "TWINE_", "CARGO_", "GEM_", "NUGET_", "DOCKER_", "REGISTRY_",
	"VAULT_", "CONSUL_", "NOMAD_", "TF_", "SSH_", "GPG_", "GNUPG_", "KUBE", "K8S_",
	"SLACK_", "DISCORD_", "TELEGRAM_", "STRIPE_", "SENDGRID_", "TWILIO_", "MAILGUN_",
	"DATADOG_", "DD_", "SENTRY_", "CODECOV_", "SNYK_", "SONAR_",
	"HEROKU_", "DIGITALOCEAN_", "LINODE_", "HCLOUD_", "CLOUDFLARE_", "CF_", "NETLIFY_", "VERCEL_", "FLY_", "RAILWAY_", "SUPABASE_",
	"CTXLS_",
}

// notProviderKeyWords are parts of names that say the variable is not an
// API key.
var notProviderKeyWords = []string{"SECRET", "PASSWORD", "PASSWD", "PRIVATE", "SESSION", "ACCESS_KEY", "ACCESS_TOKEN", "REFRESH_TOKEN", "ID_TOKEN", "SIGNING", "ENCRYPTION", "MASTER"}

// CheckKeyEnv reports whether name may be provider.apiKeyEnv: an error
// saying why not, else nil.
func CheckKeyEnv(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("provider.apiKeyEnv is %q, which %s; ctxls reads a provider's key only from a variable named like a model provider's key (such as OPENAI_API_KEY, GROQ_API_KEY, MY_PROVIDER_KEY): name one, or leave provider.apiKeyEnv empty for OPENAI_API_KEY (ANTHROPIC_API_KEY for api \"anthropic\")", name, why)
	}
	if !keyEnvShape().MatchString(name) {
		return bad("is not of the form NAME_API_KEY, NAME_KEY or NAME_TOKEN (capitals, digits and _)")
	}
	if slices.ContainsFunc(notProviderKeyPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) ||
		slices.ContainsFunc(notProviderKeyWords, func(w string) bool { return strings.Contains(name, w) }) {
		return bad("holds another service's secret, not a model provider's key")
	}
	return nil
}
