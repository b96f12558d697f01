package client

import (
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/tracegrid/tracegrid/eval/chat"
)

// translate turns neutral messages into go-openai messages, keeping the
// order of parts (frames stay in policy order, each after its label). A
// message made of exactly one text part is sent with a string content
// (the form every server accepts, and the only one some accept for
// system and assistant turns); any other message as a list of content
// parts. System and assistant messages may hold text parts only. Video
// parts become placeholder image parts; their real URLs are returned in
// placeholder order (see transport.go).
func translate(msgs []chat.Message) ([]openai.ChatCompletionMessage, []string, error) {
	if len(msgs) == 0 {
		return nil, nil, fmt.Errorf("no messages")
	}
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	var videos []string
	for i, m := range msgs {
		switch m.Role {
		case chat.RoleSystem, chat.RoleUser, chat.RoleAssistant:
		default:
			return nil, nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		if len(m.Parts) == 0 {
			return nil, nil, fmt.Errorf("message %d (%s): no parts", i, m.Role)
		}
		if len(m.Parts) == 1 && m.Parts[0].Type == chat.TypeText {
			out = append(out, openai.ChatCompletionMessage{Role: m.Role, Content: m.Parts[0].Text})
			continue
		}
		parts := make([]openai.ChatMessagePart, 0, len(m.Parts))
		for j, p := range m.Parts {
			if p.Type != chat.TypeText && m.Role != chat.RoleUser {
				return nil, nil, fmt.Errorf("message %d (%s) part %d: %s parts are only allowed in user messages", i, m.Role, j, p.Type)
			}
			switch p.Type {
			case chat.TypeText:
				parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: p.Text})
			case chat.TypeImage:
				if p.URL == "" {
					return nil, nil, fmt.Errorf("message %d part %d: image without URL", i, j)
				}
				if strings.HasPrefix(p.URL, videoScheme) {
					return nil, nil, fmt.Errorf("message %d part %d: image URL uses the reserved scheme %q", i, j, videoScheme)
				}
				parts = append(parts, openai.ChatMessagePart{
					Type:     openai.ChatMessagePartTypeImageURL,
					ImageURL: &openai.ChatMessageImageURL{URL: p.URL, Detail: openai.ImageURLDetail(p.Detail)},
				})
			case chat.TypeVideo:
				if p.URL == "" {
					return nil, nil, fmt.Errorf("message %d part %d: video without URL", i, j)
				}
				parts = append(parts, openai.ChatMessagePart{
					Type:     openai.ChatMessagePartTypeImageURL,
					ImageURL: &openai.ChatMessageImageURL{URL: videoPlaceholder(len(videos))},
				})
				videos = append(videos, p.URL)
			default:
				return nil, nil, fmt.Errorf("message %d part %d: unknown part type %q", i, j, p.Type)
			}
		}
		out = append(out, openai.ChatCompletionMessage{Role: m.Role, MultiContent: parts})
	}
	return out, videos, nil
}
