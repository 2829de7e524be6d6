package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestServe_RefusesUnusableDatabase starts the real server on an empty
// file, a damaged file and a read-only file, and checks that it exits at
// once with status 1 and a message that says what is wrong and what to do,
// instead of serving.
//
// The read-only case is a real chmod 0444: where the test runs as root
// (whom chmod does not stop), the server runs as the user nobody, in a
// directory of its own holding a file it may read but not write.
func TestServe_RefusesUnusableDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the server binary; run without -short")
	}
	bin := buildServer(t)
	seed := func(t *testing.T, dir string) string {
		path := filepath.Join(dir, "gpuledger.db")
		db, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.EnsureUser(context.Background(), ledger.User{ID: 1001, TZ: "UTC"}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return path
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) string
		want    []string
		nobody  bool
	}{
		{"ErrEmptyFile", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "gpuledger.db")
			os.WriteFile(path, nil, 0o600)
			return path
		}, []string{"is an empty file (0 bytes)", "restore the latest backup", "docs/deploy.md"}, false},
		{"ErrCorruptPage", func(t *testing.T, dir string) string {
			path := seed(t, dir)
			f, _ := os.OpenFile(path, os.O_RDWR, 0)
			fi, _ := f.Stat()
			f.WriteAt(bytes.Repeat([]byte{0xde, 0xad}, 2048), fi.Size()-4096)
			f.Close()
			return path
		}, []string{"is damaged", "restore the latest backup", "docs/deploy.md"}, false},
		{"ErrReadOnlyFile", func(t *testing.T, dir string) string {
			path := seed(t, dir)
			if err := os.Chmod(path, 0o444); err != nil {
				t.Fatal(err)
			}
			return path
		}, []string{"cannot be written", "permissions"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.prepare(t, dir)
			before, _ := os.ReadFile(path)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "serve")
			cmd.Env = append(os.Environ(), "GPULEDGER_DB="+path, "GPULEDGER_LISTEN=127.0.0.1:0", "GPULEDGER_TZ=UTC",
				"TELEGRAM_BOT_TOKEN=4242:refuse-test-token", "TELEGRAM_API_ENDPOINT=http://127.0.0.1:1/bot%s/%s",
				"GPULEDGER_ALLOWED_USERS=1001")
			cmd.Dir = dir
			if tt.nobody && os.Geteuid() == 0 {
				// The binary and the file must be reachable by nobody.
				for d := dir; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
					os.Chmod(d, 0o755)
				}
				for d := filepath.Dir(bin); d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
					os.Chmod(d, 0o755)
				}
				// The directory is nobody's: only the file is read-only.
				os.Chown(dir, 65534, 65534)
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("the server kept running on an unusable database; output:\n%s", out.String())
			}
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			t.Logf("exit %d: %s", code, strings.TrimSpace(out.String()))
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Errorf("the refused start changed the file (%d → %d bytes)", len(before), len(after))
			}
		})
	}
}
