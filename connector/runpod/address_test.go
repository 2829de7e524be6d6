package runpod_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
)

// TestClient_InstancesAddress: a pod's publicIp is its Address; none
// (initialising) is the zero Addr; one that is not an IP address refuses
// the list.
func TestClient_InstancesAddress(t *testing.T) {
	srv, c := setup(t)
	a := runpodfake.NewPod("a", "", "RUNNING", "0.74", "A40", 1, started)
	a["publicIp"] = "198.51.100.7"
	b := runpodfake.NewPod("b", "", "RUNNING", "0.74", "A40", 1, started)
	b["publicIp"] = ""
	srv.SetPods(a, b, runpodfake.NewPod("c", "", "RUNNING", "0.74", "A40", 1, started))
	ins, err := c.Instances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := byID(ins)
	if m["a"].Address.String() != "198.51.100.7" || m["b"].Address.IsValid() || m["c"].Address.IsValid() {
		t.Fatalf("addresses %v %v %v", m["a"].Address, m["b"].Address, m["c"].Address)
	}
	a["publicIp"] = "198.51.100.7:22"
	srv.SetPods(a)
	if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
		t.Fatalf("a publicIp with a port: %v, want ErrBadAnswer", err)
	}
	a["publicIp"] = 7
	srv.SetPods(a)
	if _, err := c.Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
		t.Fatalf("a publicIp that is a number: %v, want ErrBadAnswer", err)
	}
}
