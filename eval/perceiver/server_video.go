package perceiver

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tracegrid/tracegrid/encode"
	"github.com/tracegrid/tracegrid/eval/chat"
)

// checkVideoParts refuses, before the request waits for an analysis slot,
// a video part whose data is not in a container the server accepts
// (encode.SniffContainer: MP4/MOV or WebM/Matroska). libav's other
// demuxers can name further inputs — an HLS playlist lists segment files
// and URLs — which must never be opened on the server's side. Only the
// first bytes of the base64 payload are decoded here; data URLs that
// ReadMessages refuses anyway (not data:, not video/, not base64) are left
// to it, so that its errors stay as documented. Assistant messages are
// skipped, as ReadMessages skips them.
func checkVideoParts(msgs []chat.Message) *apiError {
	for mi, m := range msgs {
		if m.Role == chat.RoleAssistant {
			continue
		}
		for pi, p := range m.Parts {
			if p.Type != chat.TypeVideo {
				continue
			}
			param := fmt.Sprintf("messages[%d].content[%d]", mi, pi)
			head, ok, e := videoHead(p.URL, param)
			if e != nil {
				return e
			}
			if !ok {
				continue
			}
			if _, err := encode.SniffContainer(head); err != nil {
				return badRequest(param, "invalid_video", "%s", strings.TrimPrefix(err.Error(), "encode: "))
			}
		}
	}
	return nil
}

// sniffBytes are the bytes of a video's start that the container check
// reads.
const sniffBytes = 16

// videoHead decodes the first sniffBytes of a base64 video data URL's
// payload (fewer when it is shorter). ok is false for a URL ReadMessages
// refuses by its form; an error is a payload whose start is not base64.
func videoHead(url, param string) (head []byte, ok bool, e *apiError) {
	rest, isData := strings.CutPrefix(url, "data:")
	if !isData {
		return nil, false, nil
	}
	meta, payload, found := strings.Cut(rest, ",")
	if !found {
		return nil, false, nil
	}
	fields := strings.Split(meta, ";")
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(fields[0])), "video/") {
		return nil, false, nil
	}
	b64 := false
	for _, f := range fields[1:] {
		if strings.EqualFold(strings.TrimSpace(f), "base64") {
			b64 = true
		}
	}
	if !b64 {
		return nil, false, nil
	}
	payload = strings.TrimSpace(payload)
	head = make([]byte, sniffBytes)
	// The streaming decoder skips line breaks as ReadMessages' does.
	n, err := io.ReadFull(base64.NewDecoder(base64.StdEncoding, strings.NewReader(payload)), head)
	switch {
	case err == nil:
		return head, true, nil
	case len(payload) <= 4*sniffBytes:
		// Short: decoded whole, exactly as ReadMessages will (padding or
		// not); its errors are ReadMessages' to report.
		b, err := decodeBase64(payload)
		if err != nil {
			return nil, false, nil
		}
		return b, true, nil
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return head[:n], true, nil
	}
	return nil, false, badRequest(param, "invalid_base64", "the data URL's base64 payload is broken: %v", err)
}
