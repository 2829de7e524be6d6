// Command tgfake-server runs the fake Telegram Bot API server as its own
// process, for end-to-end tests of real binaries: point the binary's
// TELEGRAM_API_ENDPOINT at the printed endpoint and drive the users through
// the control API (see package tgfake).
//
//	tgfake-server -addr 127.0.0.1:8081 -token 123:TEST
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tgfake-server:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tgfake-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8081", "address to listen on")
	token := fs.String("token", "123456:TEST", "bot token the fake accepts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := tgfake.Start(*addr, *token)
	if err != nil {
		return err
	}
	defer s.Close()
	// One line on stdout, so a test can read the endpoint when -addr has port 0.
	fmt.Printf("TELEGRAM_API_ENDPOINT=%s\n", s.Endpoint())
	<-ctx.Done()
	return nil
}
