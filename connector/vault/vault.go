// Package vault seals the platform API keys users give with /connect, so
// that the database holds only ciphertexts: a copy of the file (a backup,
// a stolen disk image) gives no key without the server's secret.
//
// # The secret
//
// The secret comes from the environment (GPULEDGER_SECRET: at least 32
// random bytes written as hex or base64, e.g. the output of
// `openssl rand -base64 32`) or, when that is unset, from a key file
// beside the database (gpuledger.key), which Open creates with mode 0600
// holding 32 random bytes written as 64 hex digits. An existing key file
// that its group or others may read is refused. The AES-256 key is
// derived from the secret with HKDF-SHA256, so the secret itself is never
// a cipher key and a secret shared with another use is still separated.
//
// # The sealed form
//
// A sealed value is
//
//	version (1 byte, 1) | key ID (4 bytes) | nonce (12 bytes) | AES-256-GCM ciphertext and tag
//
// The nonce is random per seal (crypto/rand): with 96-bit random nonces
// the collision risk stays negligible far beyond the number of keys a
// ledger will ever seal (NIST SP 800-38D §8.3 bounds one key to 2^32
// seals). The key ID is a 4-byte tag derived from the secret, not the key:
// it lets Open tell "the secret changed" from "the value was altered or
// moved" without trying to decrypt. The version and key ID are part of
// the GCM associated data together with the caller's associated data
// (ConnectorAD: the user ID and the platform), so a ciphertext copied to
// another user's row or another platform's does not open.
//
// No error of this package contains the secret, the key or a plaintext.
package vault

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SecretEnv is the environment variable the wiring reads the secret from.
const SecretEnv = "GPULEDGER_SECRET"

// KeyFileName is the name of the generated key file, beside the database.
const KeyFileName = "gpuledger.key"

// MinSecretBytes is the least entropy a secret must carry: the AES-256
// key is derived from it, so a shorter one would weaken the key.
const MinSecretBytes = 32

const (
	version1   = 1
	keyIDLen   = 4
	nonceLen   = 12 // GCM's standard nonce, 96 bits
	tagLen     = 16
	headerLen  = 1 + keyIDLen
	overhead   = headerLen + nonceLen + tagLen
	maxSealLen = 1 << 16 // API keys are short; refuse what cannot be one
)

// HKDF labels. Changing one changes every derived key: they are part of
// the sealed format's version 1.
const (
	infoAEAD  = "gpuledger vault v1 aes-256-gcm"
	infoKeyID = "gpuledger vault v1 key id"
)

// ErrUnsealable is wrapped by every error Open (the method) returns for a
// value it cannot open: the secret changed, the value was altered, moved
// to another user or platform, truncated or of an unknown version. In
// every case the stored key is lost to the server and the user must
// /connect the platform again.
var ErrUnsealable = errors.New("vault: the stored key cannot be opened")

// ErrSecretChanged is wrapped (together with ErrUnsealable) when the value
// was sealed under another secret: GPULEDGER_SECRET or the key file was
// replaced since.
var ErrSecretChanged = errors.New("vault: the secret changed: reconnect with /connect")

// ErrDamaged is wrapped (together with ErrUnsealable) when the value was
// sealed under this secret but does not authenticate: a byte was altered,
// or the row was copied to another user or platform.
var ErrDamaged = errors.New("vault: the stored key was altered or belongs to another user or platform: reconnect with /connect")

// ErrMalformed is wrapped (together with ErrUnsealable) when the value is
// too short or of a version this build does not know.
var ErrMalformed = errors.New("vault: the stored key is not a sealed value this server can read: reconnect with /connect")

// ErrBadSecret is wrapped by the errors the package-level Open returns
// for a secret or key file it refuses; their text says how to fix it.
var ErrBadSecret = errors.New("vault: unusable secret")

// Vault seals and opens short secrets with one key. It is safe for
// concurrent use. It holds no plaintext; its String and LogValue show only
// where its secret came from, so logging a Vault by mistake leaks nothing.
type Vault struct {
	aead   cipher.AEAD
	keyID  [keyIDLen]byte
	source string
}

// Open returns a Vault keyed by secret (the value of GPULEDGER_SECRET,
// which the wiring reads) or, when secret is empty (or only spaces), by
// the key file at keyFile, created if missing (see DefaultKeyFile).
//
// A secret must decode, as hex or as base64 (standard or URL alphabet,
// padded or not), to at least MinSecretBytes bytes; a shorter one is
// refused. An existing key file must be a regular file that neither its
// group nor others can read or write, holding a secret of the same form;
// a new one gets 32 bytes from crypto/rand, written as hex, mode 0600,
// without overwriting a file another process created meanwhile. Errors
// wrap ErrBadSecret (a refused secret or key file) or the file system's
// error; none contains the secret.
func Open(secret string, keyFile string) (*Vault, error) {
	if s := strings.TrimSpace(secret); s != "" {
		raw, err := decodeSecret(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %v", ErrBadSecret, SecretEnv, err)
		}
		return newVault(raw, SecretEnv)
	}
	if keyFile == "" {
		return nil, fmt.Errorf("%w: neither %s nor a key file is given", ErrBadSecret, SecretEnv)
	}
	raw, err := readOrCreateKeyFile(keyFile)
	if err != nil {
		return nil, err
	}
	return newVault(raw, keyFile)
}

// DefaultKeyFile returns the key file's path for the database at dbPath:
// gpuledger.key in the same directory, so the two travel together on one
// volume (docs/config.md says what that means for backups).
func DefaultKeyFile(dbPath string) string {
	return filepath.Join(filepath.Dir(dbPath), KeyFileName)
}

func newVault(secret []byte, source string) (*Vault, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, infoAEAD, 32)
	if err != nil {
		return nil, fmt.Errorf("vault: derive key: %w", err)
	}
	id, err := hkdf.Key(sha256.New, secret, nil, infoKeyID, keyIDLen)
	if err != nil {
		return nil, fmt.Errorf("vault: derive key ID: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	v := &Vault{aead: aead, source: source}
	copy(v.keyID[:], id)
	clear(key)
	return v, nil
}

// Source says where the secret came from: SecretEnv or the key file's
// path. It is safe to log.
func (v *Vault) Source() string { return v.source }

// String implements fmt.Stringer with the source only.
func (v *Vault) String() string { return "vault(" + v.source + ")" }

// GoString keeps %#v from printing the cipher's key schedule.
func (v *Vault) GoString() string { return v.String() }

// LogValue implements slog.LogValuer with the source only.
func (v *Vault) LogValue() slog.Value { return slog.StringValue(v.String()) }

// Seal encrypts plaintext bound to associatedData (for a platform key:
// ConnectorAD(userID, platform)) and returns the sealed value. Two seals
// of the same plaintext differ (a fresh random nonce each). It fails only
// when the system's random source does or the plaintext is over 64 KiB.
func (v *Vault) Seal(plaintext, associatedData []byte) ([]byte, error) {
	if len(plaintext) > maxSealLen {
		return nil, fmt.Errorf("vault: seal: %d bytes is too long for a key (at most %d)", len(plaintext), maxSealLen)
	}
	out := make([]byte, headerLen+nonceLen, overhead+len(plaintext))
	out[0] = version1
	copy(out[1:headerLen], v.keyID[:])
	if _, err := io.ReadFull(rand.Reader, out[headerLen:]); err != nil {
		return nil, fmt.Errorf("vault: seal: random nonce: %w", err)
	}
	nonce := out[headerLen : headerLen+nonceLen]
	return v.aead.Seal(out, nonce, plaintext, v.ad(out[:headerLen], associatedData)), nil
}

// Open decrypts a value Seal returned with the same associatedData.
// Errors wrap ErrUnsealable and one of ErrSecretChanged, ErrDamaged or
// ErrMalformed; they never contain the value, the plaintext or the key.
func (v *Vault) Open(sealed, associatedData []byte) ([]byte, error) {
	if len(sealed) < overhead {
		return nil, unsealable(ErrMalformed, fmt.Sprintf("%d bytes is too short to be sealed (at least %d)", len(sealed), overhead))
	}
	if sealed[0] != version1 {
		return nil, unsealable(ErrMalformed, fmt.Sprintf("unknown version %d", sealed[0]))
	}
	if !bytes.Equal(sealed[1:headerLen], v.keyID[:]) {
		return nil, unsealable(ErrSecretChanged, "")
	}
	nonce := sealed[headerLen : headerLen+nonceLen]
	plain, err := v.aead.Open(nil, nonce, sealed[headerLen+nonceLen:], v.ad(sealed[:headerLen], associatedData))
	if err != nil {
		// cipher.ErrOpen says only "message authentication failed".
		return nil, unsealable(ErrDamaged, "")
	}
	return plain, nil
}

// ad is the GCM associated data: the header, then the caller's.
func (v *Vault) ad(header, associatedData []byte) []byte {
	ad := make([]byte, 0, len(header)+len(associatedData))
	return append(append(ad, header...), associatedData...)
}

// unsealedError is what Open returns: its text is the specific sentinel's
// (with a detail that holds no secret), and it matches both that sentinel
// and ErrUnsealable.
type unsealedError struct {
	kind   error
	detail string
}

func unsealable(kind error, detail string) error { return &unsealedError{kind: kind, detail: detail} }

func (e *unsealedError) Error() string {
	if e.detail == "" {
		return e.kind.Error()
	}
	return e.kind.Error() + " (" + e.detail + ")"
}

func (e *unsealedError) Unwrap() []error { return []error{e.kind, ErrUnsealable} }

// ConnectorAD returns the associated data binding a sealed platform key to
// its owner and platform: a row whose ciphertext is copied to another
// user or platform does not open. The user ID is written in decimal and
// the parts are NUL-separated, so no two (user, platform) pairs share it.
func ConnectorAD(userID int64, platform string) []byte {
	return []byte("gpuledger/connector\x00" + strconv.FormatInt(userID, 10) + "\x00" + platform)
}

// Hint returns what may be shown of a key in the /connect listing: its
// last four characters, or "" for a key under 12 characters, where four
// would be a third of it.
func Hint(key string) string {
	key = strings.TrimSpace(key)
	n := utf8.RuneCountInString(key)
	if n < 12 {
		return ""
	}
	r := []rune(key)
	return string(r[n-4:])
}

// decodeSecret decodes s as hex, else as base64, and checks its length.
// The error text gives lengths and the expected form, never s.
func decodeSecret(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil {
		// Hex is taken as hex even when short: read as base64 it would
		// seem longer than the entropy it carries.
		if len(b) < MinSecretBytes {
			return nil, fmt.Errorf("is %d bytes of hex, too short: give at least %d random bytes, e.g. the output of `openssl rand -hex %d`", len(b), MinSecretBytes, MinSecretBytes)
		}
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(b) < MinSecretBytes {
			return nil, fmt.Errorf("is %d bytes of base64, too short: give at least %d random bytes, e.g. the output of `openssl rand -base64 %d`", len(b), MinSecretBytes, MinSecretBytes)
		}
		return b, nil
	}
	return nil, fmt.Errorf("is neither hex nor base64 (%d characters): give at least %d random bytes, e.g. the output of `openssl rand -base64 %d`", len(s), MinSecretBytes, MinSecretBytes)
}

// maxKeyFile bounds what is read from a key file: 64 hex digits and a
// newline, with room for a longer base64 secret written by hand.
const maxKeyFile = 4096

// readOrCreateKeyFile returns the secret in the key file at path,
// creating the file first if it does not exist.
func readOrCreateKeyFile(path string) ([]byte, error) {
	raw, err := readKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return raw, err
	}
	if err := createKeyFile(path); err != nil {
		return nil, err
	}
	// Read back what is there: this process's file, or the one another
	// process linked first.
	return readKeyFile(path)
}

// readKeyFile opens path once and checks the opened file, so the mode
// checked is the mode of the file read.
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("vault: key file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("vault: key file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: key file %s is not a regular file", ErrBadSecret, path)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: key file %s has mode %04o: its group or others have access; make it owner-only with: chmod 600 %s",
			ErrBadSecret, path, perm, shellQuote(path))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("vault: key file %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("%w: key file %s is over %d bytes: it is not a key file", ErrBadSecret, path, maxKeyFile)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return nil, fmt.Errorf("%w: key file %s is empty (a start cut short while writing it?): if no platform was connected since, remove it and start again; else restore it from a backup", ErrBadSecret, path)
	}
	raw, err := decodeSecret(s)
	if err != nil {
		return nil, fmt.Errorf("%w: key file %s %v", ErrBadSecret, path, err)
	}
	return raw, nil
}

// createKeyFile writes 32 random bytes as hex to a temporary owner-only
// file in path's directory, syncs it, and links it to path: the link fails
// if path exists, so a key file another process created first is never
// overwritten, and path never names a half-written file. Where the file
// system has no hard links it falls back to an exclusive create.
func createKeyFile(path string) error {
	secret := make([]byte, MinSecretBytes)
	if _, err := io.ReadFull(rand.Reader, secret); err != nil {
		return fmt.Errorf("vault: key file: random bytes: %w", err)
	}
	content := []byte(hex.EncodeToString(secret) + "\n")
	clear(secret)
	defer clear(content)

	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("vault: create key file %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := writeSynced(tmp, content); err != nil {
		return fmt.Errorf("vault: create key file %s: %w", path, err)
	}
	err = os.Link(tmpName, path)
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return nil // another process won; its file is read back
	default:
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("vault: create key file %s: %w", path, err)
		}
		if err := writeSynced(f, content); err != nil {
			os.Remove(path)
			return fmt.Errorf("vault: create key file %s: %w", path, err)
		}
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // the new name survives a crash; best effort where unsupported
		d.Close()
	}
	return nil
}

// writeSynced makes f owner-only (CreateTemp already does; an explicit
// Chmod also overrides a umask that would leave less), writes b, syncs
// and closes f.
func writeSynced(f *os.File, b []byte) error {
	err := f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// shellQuote quotes path for the chmod hint when it holds anything a
// shell would split or expand.
func shellQuote(path string) string {
	if path != "" && strings.Trim(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
