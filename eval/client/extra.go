package client

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Providers: the protocols a model is reached with.
const (
	ProviderOpenAI = "openai" // OpenAI-compatible chat completions (Client)
	ProviderGemini = "gemini" // the Gemini Developer API's generateContent (Gemini)
)

// reservedTop are the top-level request fields each provider's client
// writes itself; ExtraBody may not set them, so that the prompt, the model
// and the decoding a trial records are the ones sent. Decoding belongs in
// the study's decoding block.
var reservedTop = map[string][]string{
	ProviderOpenAI: {"model", "messages", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens",
		"temperature", "top_p", "seed", "reasoning_effort"},
	ProviderGemini: {"model", "contents", "systemInstruction", "system_instruction"},
}

// reservedGeneration are the fields of Gemini's generationConfig the
// client writes (camelCase and snake_case alike).
var reservedGeneration = []string{"temperature", "topP", "top_p", "maxOutputTokens", "max_output_tokens", "seed",
	"thinkingConfig", "thinking_config", "candidateCount", "candidate_count"}

// ReservedBodyKeys lists, sorted, the body fields extra_body may not set
// for provider (Gemini's generationConfig fields as
// "generationConfig.<field>").
func ReservedBodyKeys(provider string) []string {
	out := slices.Clone(reservedTop[provider])
	if provider == ProviderGemini {
		for _, k := range reservedGeneration {
			out = append(out, "generationConfig."+k)
		}
	}
	sort.Strings(out)
	return out
}

// CheckExtraBody refuses an extra body that sets a reserved field
// (ReservedBodyKeys) or that JSON cannot encode. Errors name the field,
// never a value.
func CheckExtraBody(provider string, extra map[string]any) error {
	if len(extra) == 0 {
		return nil
	}
	if _, ok := reservedTop[provider]; !ok {
		return fmt.Errorf("client: unknown provider %q", provider)
	}
	var bad []string
	for k, v := range extra {
		if slices.Contains(reservedTop[provider], k) {
			bad = append(bad, k)
		}
		if provider == ProviderGemini && (k == "generationConfig" || k == "generation_config") {
			if gc, ok := v.(map[string]any); ok {
				for gk := range gc {
					if slices.Contains(reservedGeneration, gk) {
						bad = append(bad, k+"."+gk)
					}
				}
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("client: extra_body sets %s, which the client writes itself (use the decoding settings instead)", strings.Join(bad, ", "))
	}
	if _, err := json.Marshal(extra); err != nil {
		return fmt.Errorf("client: extra_body cannot be sent as JSON: %v", err)
	}
	return nil
}
