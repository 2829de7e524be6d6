package vast_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
)

// TestClient_InstancesAddress: public_ipaddr is the instance's Address
// (a trailing newline, as Vast.ai sends at times, dropped); absent is
// none; one that is not an IP address refuses the list.
func TestClient_InstancesAddress(t *testing.T) {
	f, c := setup(t)
	a, b := vastfake.Instance(1), vastfake.Instance(2)
	delete(b, "public_ipaddr")
	a["public_ipaddr"] = "203.0.113.9\n"
	f.SetInstances(a, b)
	got, err := c.Instances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Address.String() != "203.0.113.9" || got[1].Address.IsValid() {
		t.Fatalf("instances %+v", got)
	}
	a["public_ipaddr"] = "203.0.113"
	f.SetInstances(a)
	if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
		t.Fatalf("a public_ipaddr that is no address: %v, want ErrBadAnswer", err)
	}
}
