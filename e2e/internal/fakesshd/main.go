// Command fakesshd stands in for sshd in the end-to-end tests. Built as a
// binary named "sshd", it listens on a loopback port (printed on stdout)
// and, like sshd after a login, hands every connection to a child process
// titled "sshd: tester@notty" that holds it until the client closes it, so
// the real agent sees in /proc what an open SSH session looks like. Each
// session's start is printed ("session PID") once its process exists.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-session" {
		// The session: the connection is descriptor 3.
		io.Copy(io.Discard, os.NewFile(3, "conn"))
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakesshd:", err)
		os.Exit(1)
	}
	fmt.Println(l.Addr().String())
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakesshd:", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(1)
		}
		f, err := c.(*net.TCPConn).File()
		c.Close()
		if err != nil {
			continue
		}
		cmd := &exec.Cmd{Path: self, Args: []string{"sshd: tester@notty", "-session"}, ExtraFiles: []*os.File{f}}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fakesshd:", err)
		} else {
			// The session exists now: a test can start what must see it.
			fmt.Println("session", cmd.Process.Pid)
		}
		f.Close()
		go cmd.Wait()
	}
}
