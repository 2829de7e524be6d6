package lambda_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/lambda/lambdafake"
)

// TestClient_InstancesAddress: an instance's ip is its Address; one that
// is not an IP address refuses the list.
func TestClient_InstancesAddress(t *testing.T) {
	a := h100("a1", "active")
	a.IP = "192.0.2.44"
	fake := lambdafake.New(key, a)
	defer fake.Close()
	got, err := newClient(t, fake, nil).Instances(context.Background())
	if err != nil || len(got) != 1 || got[0].Address.String() != "192.0.2.44" {
		t.Fatalf("Instances = %+v, %v", got, err)
	}
	a.IP = "lambda-host"
	fake.SetInstances(a)
	if _, err := newClient(t, fake, nil).Instances(context.Background()); !errors.Is(err, connector.ErrBadAnswer) {
		t.Fatalf("an ip that is no address: %v, want ErrBadAnswer", err)
	}
}
