package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResultBytes is the most of a tool's result the model is given; the
// rest is cut with a note saying how much was left out.
const MaxResultBytes = 256 << 10

// Text is a tool's result as the model gets it: text as it is; structured
// content as JSON text (once, when no text block already holds it); images
// and audio as a note of what was left out; resource links as Markdown
// links; embedded text resources with their URI. At most MaxResultBytes.
func Text(res *sdk.CallToolResult) string {
	var parts []string
	texts := map[string]bool{}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			texts[compact(c.Text)] = true
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image (%s, %d bytes) was left out: ctxls passes only text to the model]", mime(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes) was left out: ctxls passes only text to the model]", mime(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, link(c))
		case *sdk.EmbeddedResource:
			parts = append(parts, embedded(c.Resource))
		default:
			parts = append(parts, fmt.Sprintf("[content of a kind ctxls does not pass on (%T) was left out]", c))
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !texts[compact(string(b))] {
			parts = append(parts, string(b))
		}
	}
	out := strings.Join(parts, "\n")
	if len(out) > MaxResultBytes {
		cut := MaxResultBytes
		for cut > 0 && !utf8Start(out[cut]) {
			cut--
		}
		out = out[:cut] + fmt.Sprintf("\n[truncated: the result is %d bytes; the first %d are shown]", len(out), cut)
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func mime(m string) string {
	if m == "" {
		return "no type given"
	}
	return m
}

func link(c *sdk.ResourceLink) string {
	name := c.Title
	if name == "" {
		name = c.Name
	}
	if name == "" {
		name = c.URI
	}
	s := fmt.Sprintf("[%s](%s)", name, c.URI)
	if c.Description != "" {
		s += ": " + c.Description
	}
	return s
}

func embedded(r *sdk.ResourceContents) string {
	if r == nil {
		return "[an empty embedded resource]"
	}
	if r.Text != "" || len(r.Blob) == 0 {
		return fmt.Sprintf("Resource %s:\n%s", r.URI, r.Text)
	}
	return fmt.Sprintf("[resource %s (%s, %d bytes of binary data) was left out]", r.URI, mime(r.MIMEType), len(r.Blob))
}

// compact is JSON text without insignificant space, or the text itself.
func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(strings.TrimSpace(s))) != nil {
		return s
	}
	return b.String()
}
