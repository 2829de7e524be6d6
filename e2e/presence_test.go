package e2e

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestAutoReleaseHeldWhileSSH runs the real agent beside a process named
// sshd with one connection open to it: the idle card comes and says who is
// connected, but no release while the connection stays, however long past
// the grace period; once it closes, the automatic release goes through.
func TestAutoReleaseHeldWhileSSH(t *testing.T) {
	w := newWorld(t)
	w.setPolicy(ledger.AutoPolicy{Action: ledger.AutoRelease, After: 6 * time.Second})

	sshd := exec.Command(filepath.Join(filepath.Dir(w.agent), "sshd"))
	out, err := sshd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sshd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sshd.Process.Kill(); sshd.Wait() })
	lines := bufio.NewReader(out)
	addr, err := lines.ReadString('\n')
	if err != nil {
		t.Fatalf("fake sshd: %v", err)
	}
	conn, err := net.Dial("tcp", addr[:len(addr)-1])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Start the agent only once the session's process exists, so that on
	// a loaded machine its first look cannot come before the login.
	if l, err := lines.ReadString('\n'); err != nil || !strings.HasPrefix(l, "session ") {
		t.Fatalf("fake sshd: no session (%q, %v)", l, err)
	}

	w.startAgent()
	w.setGPU(0)
	w.waitMessage("Connected: 1 SSH session (tester from local)", 20*time.Second)
	w.waitMessage("held while someone is connected", 10*time.Second)
	time.Sleep(12 * time.Second) // twice the grace period
	if _, err := os.Stat(w.marker); err == nil {
		t.Fatal("released while an SSH session was open")
	}
	if n := w.count("automatic release ordered"); n != 0 {
		t.Fatalf("%d automatic release orders while connected", n)
	}

	conn.Close()
	w.waitMessage("confirmed by its agent", 30*time.Second)
	if _, err := os.Stat(w.marker); err != nil {
		t.Fatal("no release once the session closed")
	}
	if r := rentalOf(w.export(), "box1"); r["state"] != "released" {
		t.Fatalf("state = %v", r["state"])
	}
}
