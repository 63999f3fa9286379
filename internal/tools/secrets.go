package tools

import "strings"

// minSecretLen is the shortest value redacted: placeholders such as "none"
// or "ollama" are not secrets, and replacing them would mangle output.
const minSecretLen = 8

// redactedKey replaces a configured secret in results, in the form the
// summarizer's redaction uses.
const redactedKey = "[REDACTED:api-key]"

// redact replaces every configured secret in text.
func (s *Set) redact(text string) string {
	for _, v := range s.secrets {
		text = strings.ReplaceAll(text, v, redactedKey)
	}
	return text
}

// providerKeys are the environment variables of LLM providers' credentials
// that commands run by the tools must not see.
func providerKey(name string) bool {
	switch name {
	case "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
		"OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY",
		"MISTRAL_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY",
		"FIREWORKS_API_KEY", "PERPLEXITY_API_KEY", "COHERE_API_KEY", "CO_API_KEY", "CEREBRAS_API_KEY",
		"DASHSCOPE_API_KEY", "MOONSHOT_API_KEY", "HF_TOKEN", "HUGGINGFACE_API_KEY", "HUGGING_FACE_HUB_TOKEN":
		return true
	}
	return false
}

// providerEndpoint reports the variables that name an LLM provider's
// endpoint: a URL that may carry a user name and password.
func providerEndpoint(name string) bool {
	switch name {
	case "OPENAI_BASE_URL", "OPENAI_API_BASE", "AZURE_OPENAI_ENDPOINT", "OLLAMA_HOST":
		return true
	}
	return strings.HasSuffix(name, "_BASE_URL")
}

// toolEnv is env without the provider keys and gencode's own variables
// (GENCODE_*), which hold configuration a command has no business with,
// and with the user name and password taken out of a provider endpoint's
// URL (OPENAI_BASE_URL=http://admin:PASS@host/v1 becomes http://host/v1).
func toolEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if providerKey(k) || strings.HasPrefix(k, "GENCODE_") {
			continue
		}
		if providerEndpoint(k) {
			kv = k + "=" + withoutUserinfo(v)
		}
		out = append(out, kv)
	}
	return out
}

// withoutUserinfo is raw without a URL's user name and password (the
// same cut as config.SplitUserinfo; tools imports no config).
func withoutUserinfo(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return raw[:i+3] + rest[at+1:]
	}
	return raw
}

// CleanEnv is env without the provider keys and gencode's own variables,
// as every process gencode starts for the model gets it (Bash, MCP
// servers).
func CleanEnv(env []string) []string { return toolEnv(env) }
