package connsync_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestSyncer_Connect(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t)
		c, err := e.s.Connect(e.ctx, uid, "RunPod", rpKey)
		if err != nil {
			t.Fatal(err)
		}
		if c.Platform != "runpod" || c.Hint != rpKey[len(rpKey)-4:] || c.KeyEnc != nil || !c.CheckedAt.Equal(t0) {
			t.Fatalf("connector = %+v", c)
		}
		cs, err := e.s.Connectors(e.ctx, uid)
		if err != nil || len(cs) != 1 || cs[0].KeyEnc != nil || cs[0].Platform != "runpod" {
			t.Fatalf("Connectors = %+v, %v", cs, err)
		}
		stored, _ := e.db.Connectors(e.ctx, uid)
		if len(stored) != 1 || len(stored[0].KeyEnc) == 0 || bytes.Contains(stored[0].KeyEnc, []byte(rpKey)) {
			t.Fatalf("stored key not sealed: %+v", stored)
		}
		// Nothing of the key in the clear in the database files.
		e.db.Close()
		files, _ := filepath.Glob(e.path + "*")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte(rpKey)) {
				t.Fatalf("%s holds the key in the clear", f)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for name, c := range map[string]struct{ platform, key, want string }{
			"Platform":   {"paperspace", rpKey, "not a platform"},
			"Empty":      {"runpod", "", "empty"},
			"Long":       {"runpod", strings.Repeat("k", 513), "over the 512"},
			"Space":      {"runpod", "abc def", "not printable ASCII"},
			"NonASCII":   {"runpod", "abcdéf", "not printable ASCII"},
			"LineBreak":  {"runpod", rpKey + "\n", "line break"},
			"ControlChr": {"vast", "ab\x00cd", "not printable"},
		} {
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				_, err := e.s.Connect(e.ctx, uid, c.platform, c.key)
				if ledger.ErrorCode(err) != ledger.EINVALID || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("Connect = %v, want EINVALID saying %q", err, c.want)
				}
				if c.key != "" && strings.Contains(err.Error(), c.key) {
					t.Fatalf("the error shows the key: %v", err)
				}
				if n := e.rp.Calls("POST /graphql") + e.vf.Calls("GET /api/v0/users/current"); n != 0 {
					t.Fatalf("%d calls sent with a bad key", n)
				}
				if cs, _ := e.db.Connectors(e.ctx, uid); len(cs) != 0 {
					t.Fatalf("stored %+v", cs)
				}
			})
		}
	})
	t.Run("ErrUnauthorized", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.s.Connect(e.ctx, uid, "runpod", "rpa_WRONGKEY0123456789abcd")
		if !errors.Is(err, connector.ErrUnauthorized) {
			t.Fatalf("Connect = %v, want ErrUnauthorized", err)
		}
		if strings.Contains(err.Error(), "WRONGKEY") {
			t.Fatalf("the error shows the key: %v", err)
		}
		if cs, _ := e.db.Connectors(e.ctx, uid); len(cs) != 0 {
			t.Fatalf("a rejected key was stored: %+v", cs)
		}
	})
	t.Run("ErrUnavailable", func(t *testing.T) {
		e := newEnv(t)
		e.rp.SetFault(runpodfake.Status(502, "text/html", "<html>bad gateway</html>"))
		_, err := e.s.Connect(e.ctx, uid, "runpod", rpKey)
		if !errors.Is(err, connector.ErrUnavailable) && !errors.Is(err, connector.ErrBadAnswer) {
			t.Fatalf("Connect = %v, want ErrUnavailable", err)
		}
		if cs, _ := e.db.Connectors(e.ctx, uid); len(cs) != 0 {
			t.Fatalf("stored %+v", cs)
		}
	})
	t.Run("ImmediateRound", func(t *testing.T) {
		e := newEnv(t)
		e.s.SetSender(nil)
		e.rp.SetPods(pod("abc123", "box1", "RUNNING", "0.79", t0.Add(-time.Hour)))
		ctx, cancel := context.WithCancel(e.ctx)
		done := make(chan error, 1)
		go func() { done <- e.s.Run(ctx, e.snd) }()
		e.connect("runpod")
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := e.db.Rental(e.ctx, uid, "box1"); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond) // waiting for Run's goroutine, not for logic
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if e.rp.Calls("GET /v1/pods") == 0 {
			t.Fatal("Connect did not start a round")
		}
		if _, err := e.db.Rental(e.ctx, uid, "box1"); err != nil {
			t.Fatalf("the first round logged nothing: %v", err)
		}
	})
}

func TestSyncer_Disconnect(t *testing.T) {
	e := newEnv(t)
	if err := e.s.Disconnect(e.ctx, uid, "runpod"); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("Disconnect of nothing = %v, want ENOTFOUND", err)
	}
	e.connect("runpod")
	if err := e.s.Disconnect(e.ctx, uid, "runpod"); err != nil {
		t.Fatal(err)
	}
	e.round()
	if n := e.rp.Calls("GET /v1/pods"); n != 0 {
		t.Fatalf("%d list calls after Disconnect", n)
	}
	if err := e.s.SyncNow(e.ctx, uid, "runpod"); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("SyncNow after Disconnect = %v, want ENOTFOUND", err)
	}
}
