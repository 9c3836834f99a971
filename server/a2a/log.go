package a2a

import (
	"context"
	"log/slog"

	"github.com/rs/zerolog"
)

// zerologHandler is an slog.Handler writing to the server's zerolog logger: the A2A
// SDK logs through slog (a stream write that failed because the client left, an answer
// it could not encode), and those lines belong in the server's log, in its format,
// not on standard error.
type zerologHandler struct {
	log   *zerolog.Logger
	attrs []slog.Attr
	group string
}

func (h *zerologHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.GetLevel() <= zerologLevel(l)
}

func (h *zerologHandler) Handle(_ context.Context, r slog.Record) error {
	ev := h.log.WithLevel(zerologLevel(r.Level)).Str("component", "a2a")
	add := func(a slog.Attr) bool {
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		if err, ok := a.Value.Any().(error); ok {
			ev = ev.AnErr(key, err)
		} else {
			ev = ev.Str(key, a.Value.String())
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	ev.Msg(r.Message)
	return nil
}

func (h *zerologHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := *h
	out.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &out
}

func (h *zerologHandler) WithGroup(name string) slog.Handler {
	out := *h
	if out.group != "" {
		name = out.group + "." + name
	}
	out.group = name
	return &out
}

func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	case l >= slog.LevelInfo:
		return zerolog.InfoLevel
	}
	return zerolog.DebugLevel
}
