package app

import (
	"bytes"
	"encoding/base64"
	"html/template"
	"image/png"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"
)

// qrDataURI returns text as a QR code, a PNG data: URI an <img> can show under the app's
// Content-Security-Policy (img-src 'self' data:). Medium error correction, scaled to
// 200 × 200 pixels: readable by a phone camera off a laptop screen. It returns an error
// only when text is too long for a QR code.
func qrDataURI(text string) (template.URL, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", err
	}
	if code, err = barcode.Scale(code, 200, 200); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, code); err != nil {
		return "", err
	}
	// The URI is built here from PNG bytes only, so it is safe to mark for a src.
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}
