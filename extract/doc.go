// Package extract reads the text out of uploaded research files (.pdf .docx .xlsx
// .pptx .csv .txt .md) so it can brief the moderator.
//
// It is its own folder because it parses untrusted documents: every byte it reads
// comes from whoever uploaded the file. Keeping the parsers here, in isolation and
// importing nothing of ours (only the standard library), keeps that attack surface
// small, auditable and fuzzable on its own. Each extraction runs in its own goroutine
// that recovers from panics and is abandoned at a deadline, and every loop,
// decompression and output buffer is bounded by Limits, so a hostile zip bomb or
// malformed PDF costs a bounded amount of time and memory and yields "nothing could
// be read" rather than a crash.
//
// Extraction is best effort by design: PDF text is taken from the text-showing
// operators of the page content streams, with single-byte strings read as
// WinAnsiEncoding; fonts with other encodings (composite CID fonts, custom
// /Differences, ToUnicode maps) are not decoded, and output that comes out mostly
// unreadable is reported as not extracted instead of being passed on as garbage.
package extract
