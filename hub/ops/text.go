package ops

import (
	"context"
	"fmt"

	"github.com/edihub/edihub/edifact"
)

// PayloadText is a payload as an editor shows it: decoded by the charset
// its UNB declares (a Latin-1 UNOC payload as Latin-1, UNOY as UTF-8), not
// escaped (an editor shows text, the JSON around it is escaped by
// escape.JSONWriter). Exact says that EncodeEdit of Text gives the payload
// back byte for byte; when it is false, saving the text would change bytes
// the charset does not define (edit byte for byte with dlq edit --file).
type PayloadText struct {
	Charset  string `json:"charset"`
	SyntaxID string `json:"syntax_id,omitempty"`
	Text     string `json:"text"`
	Exact    bool   `json:"exact"`
}

// TextOf decodes a payload for an editor.
func TextOf(data []byte) PayloadText {
	cs := edifact.CharsetOf(edifact.SyntaxIDOf(data), data)
	text, exact := cs.Decode(data)
	return PayloadText{Charset: cs.Name, SyntaxID: cs.SyntaxID, Text: text, Exact: exact}
}

// EncodeEdit turns an edited text back into bytes in the charset the
// edited text's UNB declares; where that is a 7-bit level or unknown,
// the original decides as it did for showing it (TextOf). A character the
// charset cannot carry is a bad request naming it.
func EncodeEdit(original []byte, text string) ([]byte, error) {
	cs := edifact.CharsetOf(edifact.SyntaxIDOf([]byte(text)), original)
	b, err := cs.Encode(text)
	if err != nil {
		return nil, BadRequest("%s", err.Error())
	}
	return b, nil
}

// EditText is Edit for an edited text (the console's editor): the text is
// encoded back by EncodeEdit, so a Latin-1 payload is stored as Latin-1.
func (o *Ops) EditText(ctx context.Context, id, text, reason string) (*EditResult, error) {
	ref, raw, err := o.readID(ctx, id)
	if err != nil {
		return nil, err
	}
	payload, err := EncodeEdit(raw.Data, text)
	if err != nil {
		return nil, fmt.Errorf("edit %s: %w", ref, err)
	}
	return o.Edit(ctx, id, payload, reason)
}
