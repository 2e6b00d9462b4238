package chat

import "testing"

func TestCheckKeyEnv(t *testing.T) {
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY", "HF_TOKEN", "MY_KEY", "LLM_KEY2_KEY"} {
		if err := CheckKeyEnv(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "CI_JOB_TOKEN", "VAULT_TOKEN", "CTXLS_MCP_TOKEN", "STRIPE_SECRET_KEY", "SSH_PRIVATE_KEY", "HOME", "PATH", "openai_api_key", "OPENAI_API_KEY ", "MY_PASSWORD"} {
		if err := CheckKeyEnv(name); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Resolve(Provider{BaseURL: "http://127.0.0.1:1/v1", Model: "m", APIKeyEnv: "AWS_SECRET_ACCESS_KEY"}, func(string) string { return "s" }, nil); err == nil {
		t.Error("Resolve took apiKeyEnv AWS_SECRET_ACCESS_KEY")
	}
}
