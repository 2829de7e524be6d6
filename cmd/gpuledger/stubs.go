package main

import (
	"context"
	"errors"
	"io"
)

var errUsage = errors.New("usage")

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) error {
	return errors.New("not built yet")
}
