package wire_test

import (
	"crypto/sha256"
	"testing"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// The server holds only the token's SHA-256; what it signs with that hash
// must verify with the token the agent holds.
func TestSignOrderWithKey(t *testing.T) {
	const tok = "secret-token"
	h := sha256.Sum256([]byte(tok))
	o := order()
	o.Signature = wire.SignOrderWithKey(h[:], o)
	if o.Signature != wire.SignOrder(tok, o) {
		t.Fatal("SignOrderWithKey(sha256(token)) differs from SignOrder(token)")
	}
	if err := wire.VerifyOrder(tok, o, t0, nil); err != nil {
		t.Fatalf("VerifyOrder = %v", err)
	}
	if wire.SignOrderWithKey([]byte(tok), o) == o.Signature {
		t.Fatal("the raw token must not be the key")
	}
}
