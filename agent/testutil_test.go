package agent

import (
	"errors"
	"io"
	"log/slog"
)

func errorsIsPermanent(err error) bool { return errors.Is(err, ErrPermanent) }

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
