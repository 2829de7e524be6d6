package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// runHealthcheck asks the running server's /healthz and fails unless it
// answers 200 ok. It is the Docker image's HEALTHCHECK: the image has no
// shell and no curl.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", envOr(getenv, "GPULEDGER_LISTEN", ":8477"), "the server's hub address (GPULEDGER_LISTEN)")
	target := fs.String("url", "", "the health URL; default http://127.0.0.1:PORT/healthz from -listen")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: gpuledger healthcheck [--listen ADDR | --url URL] [--timeout D]\n\nExit 0 when the running server answers /healthz. Flags:\n")
		fs.PrintDefaults()
	}
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q: healthcheck takes only flags", rest[0])
	}
	u := *target
	if u == "" {
		host, port, err := net.SplitHostPort(*listen)
		if err != nil {
			return fmt.Errorf("GPULEDGER_LISTEN / -listen: %q is not host:port (e.g. :8477)", *listen)
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		u = "http://" + net.JoinHostPort(host, port) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("-url %q: %w", u, err)
	}
	res, err := (&http.Client{Timeout: *timeout}).Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		return fmt.Errorf("unhealthy: %s answered %s %q", u, res.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}
