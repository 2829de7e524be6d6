package vault_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gpuledger/gpuledger/connector/vault"
)

// secretA and secretB are two valid secrets (32 bytes each, hex and
// base64).
var (
	secretA = hex.EncodeToString(bytes.Repeat([]byte{0xA5}, 32))
	secretB = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5A}, 32))
)

const apiKey = "rpa_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789wxyz"

func mustOpen(t *testing.T, secret, keyFile string) *vault.Vault {
	t.Helper()
	v, err := vault.Open(secret, keyFile)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return v
}

// noLeak fails when err's text holds the key or the secret.
func noLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains a secret", err)
		}
	}
}

func TestVault_SealOpen(t *testing.T) {
	v := mustOpen(t, secretA, "")
	ad := vault.ConnectorAD(7, "runpod")
	sealed, err := v.Seal([]byte(apiKey), ad)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(apiKey)) || bytes.Contains(sealed, []byte("wxyz")) {
		t.Fatal("the sealed value holds the plaintext")
	}
	t.Run("OK", func(t *testing.T) {
		got, err := v.Open(sealed, ad)
		if err != nil || string(got) != apiKey {
			t.Fatalf("Open = %q, %v; want the key", got, err)
		}
		// Another Vault on the same secret (a restart) opens it too.
		got, err = mustOpen(t, " "+secretA+"\n", "").Open(sealed, ad)
		if err != nil || string(got) != apiKey {
			t.Fatalf("after a restart: Open = %q, %v", got, err)
		}
	})
	t.Run("TwoSealsDiffer", func(t *testing.T) {
		again, err := v.Seal([]byte(apiKey), ad)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(again, sealed) {
			t.Fatal("two seals of the same key are equal")
		}
		if bytes.Equal(again[5:17], sealed[5:17]) {
			t.Fatal("two seals share a nonce")
		}
	})
	t.Run("Empty", func(t *testing.T) {
		s, err := v.Seal(nil, ad)
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Open(s, ad)
		if err != nil || len(got) != 0 {
			t.Fatalf("Open(empty) = %q, %v", got, err)
		}
	})
	t.Run("TooLong", func(t *testing.T) {
		if _, err := v.Seal(make([]byte, 1<<16+1), ad); err == nil {
			t.Fatal("Seal of 64 KiB + 1 succeeded")
		}
	})
}

func TestVault_OpenRefuses(t *testing.T) {
	v := mustOpen(t, secretA, "")
	ad := vault.ConnectorAD(7, "runpod")
	sealed, err := v.Seal([]byte(apiKey), ad)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	cases := []struct {
		name   string
		v      *vault.Vault
		sealed []byte
		ad     []byte
		want   error
	}{
		{"FlippedCiphertext", v, flip(len(sealed) / 2), ad, vault.ErrDamaged},
		{"FlippedTag", v, flip(len(sealed) - 1), ad, vault.ErrDamaged},
		{"FlippedNonce", v, flip(6), ad, vault.ErrDamaged},
		{"FlippedKeyID", v, flip(2), ad, vault.ErrSecretChanged},
		{"WrongVersion", v, flip(0), ad, vault.ErrMalformed},
		{"VersionZero", v, append([]byte{0}, sealed[1:]...), ad, vault.ErrMalformed},
		{"Truncated", v, sealed[:len(sealed)-1], ad, vault.ErrDamaged},
		{"TruncatedToHeader", v, sealed[:20], ad, vault.ErrMalformed},
		{"Empty", v, nil, ad, vault.ErrMalformed},
		{"AnotherUser", v, sealed, vault.ConnectorAD(8, "runpod"), vault.ErrDamaged},
		{"AnotherPlatform", v, sealed, vault.ConnectorAD(7, "vast"), vault.ErrDamaged},
		{"NoAD", v, sealed, nil, vault.ErrDamaged},
		{"AnotherSecret", mustOpen(t, secretB, ""), sealed, ad, vault.ErrSecretChanged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.v.Open(c.sealed, c.ad)
			if err == nil {
				t.Fatalf("Open = %q, nil; want an error", got)
			}
			if got != nil {
				t.Errorf("Open returned %q with its error", got)
			}
			if !errors.Is(err, c.want) || !errors.Is(err, vault.ErrUnsealable) {
				t.Errorf("Open error %v; want %v and ErrUnsealable", err, c.want)
			}
			if !strings.Contains(err.Error(), "/connect") {
				t.Errorf("error %q does not say to reconnect", err)
			}
			noLeak(t, err, apiKey, "wxyz", secretA, secretB)
		})
	}
	if err := func() error { _, err := mustOpen(t, secretB, "").Open(sealed, ad); return err }(); err.Error() != "vault: the secret changed: reconnect with /connect" {
		t.Errorf("wrong secret: %q", err)
	}
}

// TestConnectorAD_Distinct checks that no two (user, platform) pairs of a
// plausible confusion share associated data.
func TestConnectorAD_Distinct(t *testing.T) {
	pairs := []struct {
		u int64
		p string
	}{{1, "2runpod"}, {12, "runpod"}, {1, "runpod"}, {-1, "runpod"}, {1, "runpod\x00"}, {0, ""}}
	seen := map[string]int{}
	for i, p := range pairs {
		k := string(vault.ConnectorAD(p.u, p.p))
		if j, ok := seen[k]; ok {
			t.Errorf("pairs %v and %v share %q", pairs[j], p, k)
		}
		seen[k] = i
	}
}

func TestOpen_Secret(t *testing.T) {
	raw := bytes.Repeat([]byte{0x42}, 32)
	forms := map[string]string{
		"hex":          hex.EncodeToString(raw),
		"HEX":          strings.ToUpper(hex.EncodeToString(raw)),
		"base64":       base64.StdEncoding.EncodeToString(raw),
		"base64 raw":   base64.RawStdEncoding.EncodeToString(raw),
		"base64url":    base64.URLEncoding.EncodeToString(append(raw, 0xfb, 0xff)),
		"base64 long":  base64.StdEncoding.EncodeToString(bytes.Repeat(raw, 3)),
		"with newline": hex.EncodeToString(raw) + "\n",
	}
	var ref []byte
	for name, s := range forms {
		t.Run("OK/"+name, func(t *testing.T) {
			v := mustOpen(t, s, filepath.Join(t.TempDir(), "unused.key"))
			if v.Source() != vault.SecretEnv {
				t.Errorf("Source = %q, want %s", v.Source(), vault.SecretEnv)
			}
			if _, err := os.Stat(filepath.Join(t.TempDir(), "unused.key")); err == nil {
				t.Error("a key file was created although the secret was set")
			}
		})
	}
	// The hex and base64 forms of the same 32 bytes are the same key.
	vh := mustOpen(t, forms["hex"], "")
	vb := mustOpen(t, forms["base64"], "")
	ref, err := vh.Seal([]byte(apiKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := vb.Open(ref, nil); err != nil || string(got) != apiKey {
		t.Errorf("base64 of the same bytes: Open = %q, %v", got, err)
	}

	short := map[string]string{
		"hex 31":     hex.EncodeToString(raw[:31]),
		"base64 31":  base64.StdEncoding.EncodeToString(raw[:31]),
		"password":   "correct horse battery staple!!",
		"long words": "this is a long passphrase, not random bytes in hex or base64",
		"hex 16":     "00112233445566778899aabbccddeeff",
	}
	for name, s := range short {
		t.Run("ErrBadSecret/"+name, func(t *testing.T) {
			keyFile := filepath.Join(t.TempDir(), "gpuledger.key")
			v, err := vault.Open(s, keyFile)
			if err == nil {
				t.Fatalf("Open(%q) = %v, nil; want a refusal", s, v)
			}
			if !errors.Is(err, vault.ErrBadSecret) {
				t.Errorf("error %v does not wrap ErrBadSecret", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, vault.SecretEnv) || !strings.Contains(msg, "32") || !strings.Contains(msg, "openssl rand") {
				t.Errorf("error %q does not name the variable, the length and how to make one", msg)
			}
			noLeak(t, err, s)
			if _, err := os.Stat(keyFile); err == nil {
				t.Error("a refused secret fell back to a key file")
			}
		})
	}
}

func TestOpen_KeyFile(t *testing.T) {
	t.Run("Created0600", func(t *testing.T) {
		dir := t.TempDir()
		path := vault.DefaultKeyFile(filepath.Join(dir, "gpuledger.db"))
		if path != filepath.Join(dir, "gpuledger.key") {
			t.Fatalf("DefaultKeyFile = %q", path)
		}
		old := umask(0)
		v := mustOpen(t, "", path)
		umask(old)
		if v.Source() != path {
			t.Errorf("Source = %q, want %q", v.Source(), path)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("key file mode %04o, want 0600", st.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(raw) != 32 {
			t.Fatalf("key file holds %q: want 64 hex digits (%v)", b, err)
		}
		if bytes.Count(raw, raw[:1]) == 32 {
			t.Fatal("key file holds 32 equal bytes")
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("directory holds %v: the temporary file was left", entries)
		}

		// A second start reads the same key; so does GPULEDGER_SECRET
		// set to the file's contents (a move from file to environment).
		sealed, err := v.Seal([]byte(apiKey), nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, w := range map[string]*vault.Vault{"restart": mustOpen(t, "", path), "env": mustOpen(t, string(b), "")} {
			if got, err := w.Open(sealed, nil); err != nil || string(got) != apiKey {
				t.Errorf("%s: Open = %q, %v", name, got, err)
			}
		}
	})
	t.Run("TwoFirstStarts", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "gpuledger.key")
		var wg sync.WaitGroup
		vs := make([]*vault.Vault, 8)
		errs := make([]error, 8)
		for i := range vs {
			wg.Go(func() { vs[i], errs[i] = vault.Open("", path) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Open %d: %v", i, err)
			}
		}
		sealed, err := vs[0].Seal([]byte(apiKey), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if _, err := v.Open(sealed, nil); err != nil {
				t.Errorf("Open %d got another key: %v", i, err)
			}
		}
	})
	refused := []struct {
		name    string
		mode    os.FileMode
		content string
		want    []string
	}{
		{"WorldReadable", 0o604, secretA, []string{"0604", "chmod 600 "}},
		{"GroupReadable", 0o640, secretA, []string{"0640", "chmod 600 "}},
		{"GroupWritable", 0o620, secretA, []string{"0620", "chmod 600 "}},
		{"Empty", 0o600, "", []string{"empty"}},
		{"Short", 0o600, "00112233445566778899aabbccddeeff", []string{"too short"}},
		{"Garbage", 0o600, "not a key\x00\x01", []string{"neither hex nor base64"}},
		{"Huge", 0o600, strings.Repeat("a", 5000), []string{"over 4096 bytes"}},
	}
	for _, c := range refused {
		t.Run("ErrBadSecret/"+c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "my key dir", "gpuledger.key")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.content), c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			v, err := vault.Open("", path)
			if err == nil {
				t.Fatalf("Open = %v, nil; want a refusal", v)
			}
			if !errors.Is(err, vault.ErrBadSecret) {
				t.Errorf("error %v does not wrap ErrBadSecret", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "chmod") && !strings.Contains(err.Error(), "chmod 600 '"+path+"'") {
				t.Errorf("error %q: the chmod command does not quote the path", err)
			}
			noLeak(t, err, c.content)
			if b, _ := os.ReadFile(path); string(b) != c.content {
				t.Error("a refused key file was rewritten")
			}
		})
	}
	t.Run("ErrBadSecret/Directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "gpuledger.key")
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := vault.Open("", path); !errors.Is(err, vault.ErrBadSecret) {
			t.Errorf("Open of a directory: %v", err)
		}
	})
	t.Run("NoDirectory", func(t *testing.T) {
		if _, err := vault.Open("", filepath.Join(t.TempDir(), "missing", "gpuledger.key")); err == nil {
			t.Error("Open in a missing directory succeeded")
		}
	})
	t.Run("NoPath", func(t *testing.T) {
		if _, err := vault.Open("  ", ""); !errors.Is(err, vault.ErrBadSecret) {
			t.Errorf("Open with neither: %v", err)
		}
	})
}

// TestVault_Printing checks that printing or logging a Vault shows its
// source only, not the cipher's key schedule.
func TestVault_Printing(t *testing.T) {
	v := mustOpen(t, secretA, "")
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("opened", "vault", v)
	for _, s := range []string{fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s", v, v, v, v), buf.String()} {
		if !strings.Contains(s, "vault("+vault.SecretEnv+")") || strings.Contains(s, "aead") || strings.Contains(s, "0x") {
			t.Errorf("printed as %q", s)
		}
	}
}

func TestHint(t *testing.T) {
	for key, want := range map[string]string{
		apiKey:              "wxyz",
		"  " + apiKey + " ": "wxyz",
		"short-key1":        "",
		"":                  "",
		"秘密秘密秘密秘密秘密秘密":      "秘密秘密",
		"abcdefgh1234":      "1234",
	} {
		if got := vault.Hint(key); got != want {
			t.Errorf("Hint(%q) = %q, want %q", key, got, want)
		}
	}
}
