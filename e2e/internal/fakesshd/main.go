// Command fakesshd stands in for sshd in the end-to-end tests: built as a
// binary named "sshd", it listens on a loopback port (printed on stdout)
// and holds every connection open until the client closes it, so the real
// agent sees what an open SSH session looks like in /proc.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakesshd:", err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().String())
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			io.Copy(io.Discard, c)
			c.Close()
		}()
	}
}
