package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

const (
	crashDBEnv    = "GPULEDGER_CRASH_DB"
	crashRoundEnv = "GPULEDGER_CRASH_ROUND"
)

// TestHelperWriter is the child process of TestCrash_SIGKILL: it writes
// in a loop and prints each write's ID only after the call returned, that
// is after its transaction committed. It does nothing in a normal run.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(crashDBEnv)
	if path == "" {
		t.Skip("helper process of TestCrash_SIGKILL; runs only when that test starts it with " + crashDBEnv + " set")
	}
	round := os.Getenv(crashRoundEnv)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.WithLogger(quiet))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 1}); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	for i := range 1_000_000 {
		name := fmt.Sprintf("c%s-%d", round, i)
		start := t0.Add(time.Duration(i) * time.Second)
		r, err := db.CreateRental(ctx, ledger.Action{UserID: 1, Key: "crash:" + name}, box(name, start))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Printf("ack rental %d %s\n", r.ID, name)
		r, err = db.AppendEvent(ctx, act(1), name, ledger.Event{Kind: ledger.EventStop, At: start.Add(time.Second)})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Printf("ack event %d %s\n", r.Events[1].ID, name)
	}
	os.Exit(0)
}

// TestCrash_SIGKILL kills a writing child process with SIGKILL in the
// middle of a burst of writes, several times, and checks after each kill
// that the file passes PRAGMA integrity_check and holds every write the
// child acknowledged (printed after its commit).
func TestCrash_SIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; run without -short")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	type ack struct {
		kind string
		id   int64
		name string
	}
	var acked []ack
	for round, killAfter := range []int{1, 17, 60, 151} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashRoundEnv+"="+strconv.Itoa(round))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		n, killed := 0, false
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) > 0 && f[0] == "error" {
				t.Errorf("round %d: child: %s", round, sc.Text())
			}
			if len(f) != 4 || f[0] != "ack" {
				continue
			}
			id, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatalf("round %d: bad ack %q", round, sc.Text())
			}
			acked = append(acked, ack{f[1], id, f[3]})
			if n++; n == killAfter && !killed {
				// Keep reading after the kill: lines already written
				// were acknowledged too.
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		err = cmd.Wait()
		cancel()
		if !killed {
			t.Fatalf("round %d: child ended before %d acks: %v", round, killAfter, err)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child was not killed by SIGKILL: %v", round, err)
		}

		// The file as the next process finds it: check it raw first,
		// before any Open could repair or migrate anything.
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		var integrity string
		if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
			t.Fatalf("round %d: integrity_check = %q, %v", round, integrity, err)
		}
		for _, a := range acked {
			var q string
			switch a.kind {
			case "rental":
				q = `SELECT count(*) FROM rentals WHERE id = ? AND name = ?`
			case "event":
				q = `SELECT count(*) FROM rental_events e JOIN rentals r ON r.id = e.rental_id
					WHERE e.id = ? AND r.name = ? AND e.kind = 'stop'`
			}
			var c int
			if err := raw.QueryRow(q, a.id, a.name).Scan(&c); err != nil || c != 1 {
				t.Fatalf("round %d: acknowledged %s %d (%s) is missing after SIGKILL: %d, %v", round, a.kind, a.id, a.name, c, err)
			}
		}
		raw.Close()
		t.Logf("round %d: killed after %d acks; %d acknowledged writes in all are present", round, n, len(acked))
	}
	db := openPath(t, path)
	b, err := db.Book(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	rentals := 0
	for _, a := range acked {
		if a.kind == "rental" {
			rentals++
		}
	}
	if len(b.Rentals) < rentals {
		t.Fatalf("Book has %d rentals, fewer than the %d acknowledged", len(b.Rentals), rentals)
	}
}
