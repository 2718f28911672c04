package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// An interchange too large for the NATS server is uploaded by its partner
// in chunks on edi.upload.<partner>.<sha256> (UploadSubject; stream
// DefaultUploadStream), then announced on the partner's ingest subject by
// a small message whose headers name the upload (HdrUploadSHA256,
// HdrUploadSize). The hub reads the chunks only under the partner of the
// ingest subject it stored the announcement on, checks the bytes against
// the SHA-256 before anything parses them, and keeps them in the payload
// bucket as UploadObject(partner, sha256).
const (
	// HdrUploadSHA256 on an ingest message: its payload is the upload
	// whose bytes hash to this (hex SHA-256, also the upload subject's
	// last token).
	HdrUploadSHA256 = "x-upload-sha256"
	// HdrUploadSize is the upload's size in bytes.
	HdrUploadSize = "x-upload-size"
	// HdrUploadChunk numbers a chunk (0, 1, ...) on an upload subject;
	// a chunk carries its upload's HdrUploadSHA256 too.
	HdrUploadChunk = "x-upload-chunk"

	// DefaultUploadStream stores upload chunks until the hub takes them
	// (hub.claim_check.upload_stream).
	DefaultUploadStream = "UPLOAD"
	// UploadAll are the upload subjects partners are granted.
	UploadAll = "edi.upload.>"
	// UploadChunks is what the upload stream stores: exactly
	// edi.upload.<partner>.<sha256> (a subject with more tokens is not
	// stored), each chunk under its partner's UploadStoredSubject
	// (UploadStoredTransform), so that the stream's per-subject limit is
	// each partner's own quota.
	UploadChunks = "edi.upload.*.*"
	// UploadStoredTransform is the stream's subject transform from
	// UploadChunks to UploadStoredSubject.
	UploadStoredTransform = "edi.upload.{{wildcard(1)}}"
	uploadPrefix          = "edi.upload."
)

func init() {
	for _, n := range []string{HdrUploadSHA256, HdrUploadSize, HdrUploadChunk} {
		producerSettable[n] = true
	}
}

// UploadSubject is where partner publishes the chunks of the upload whose
// bytes hash to sha256.
func UploadSubject(partner, sha256 string) string {
	return uploadPrefix + partner + "." + sha256
}

// UploadStoredSubject is the subject the upload stream keeps all of
// partner's chunks under (the upload each belongs to in its
// HdrUploadSHA256 header, which Send sets on every chunk).
func UploadStoredSubject(partner string) string { return uploadPrefix + partner }

// UploadPartnerSubjects are the subjects one partner may upload to.
func UploadPartnerSubjects(partner string) string { return uploadPrefix + partner + ".>" }

// UploadChunkMsgID is a chunk's Nats-Msg-Id: a chunk sent again is dropped
// by the server.
func UploadChunkMsgID(partner, sha256 string, i int) string {
	return "upload:" + partner + ":" + sha256 + ":" + strconv.Itoa(i)
}

// UploadObject names an upload once the hub took it into the payload
// bucket: under the partner it was read for, so no partner's reference
// reaches another's.
func UploadObject(partner, sha256 string) string { return "upload/" + partner + "/" + sha256 }

// Upload is what an ingest message's upload headers say.
type Upload struct {
	SHA256 string
	Size   int64
}

// ErrNoUpload: the message carries its payload inline.
var ErrNoUpload = errors.New("no upload")

// UploadOf reads the upload headers (get is a header getter):
// ErrNoUpload without x-upload-sha256.
func UploadOf(get func(string) string) (Upload, error) {
	sha := get(HdrUploadSHA256)
	if sha == "" {
		return Upload{}, ErrNoUpload
	}
	if !IsSHA256Hex(sha) {
		return Upload{}, fmt.Errorf("%s %q is not a lower-case hex SHA-256", HdrUploadSHA256, sha)
	}
	size, err := strconv.ParseInt(get(HdrUploadSize), 10, 64)
	if err != nil || size <= 0 {
		return Upload{}, fmt.Errorf("upload %s: %s %q is not a size", sha, HdrUploadSize, get(HdrUploadSize))
	}
	return Upload{SHA256: sha, Size: size}, nil
}

// IsSHA256Hex reports a lower-case hex SHA-256 (64 characters).
func IsSHA256Hex(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

// UploadStub is the body of an upload's ingest message: what a reader that
// ignores headers sees.
func UploadStub(u Upload) []byte {
	return fmt.Appendf(nil, `{"upload":{"sha256":%q,"size":%d}}`, u.SHA256, u.Size)
}
