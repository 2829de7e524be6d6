package bot_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// TestCore_ReleaseEnrolledStillReporting: /release of an enrolled
// instance whose agent reported a moment ago says that the instance is
// still up and billing on the platform unless released there too; the
// agent, refused its rental's token, announces itself again from the same
// run, and that is not offered as a new instance. English and Chinese,
// through the real hub.
func TestCore_ReleaseEnrolledStillReporting(t *testing.T) {
	for _, tt := range []struct {
		lang string
		want []string
	}{
		{"en", []string{"released", "agent reported", "still up", "RunPod", "release it there too", "not offered as a new instance"}},
		{"zh", []string{"已释放", "代理", "仍在运行", "RunPod", "也释放", "不会当作新实例"}},
	} {
		t.Run(tt.lang, func(t *testing.T) {
			he := newEnrolEnv(t)
			he.say(alice, "/lang "+tt.lang)
			tok, _ := he.enrol(alice)
			he.now = he.now.Add(10 * time.Minute)
			he.announce(tok, "runpod", "abc123", "NVIDIA A40")
			id := he.pendingID(alice, "abc123")
			he.say(alice, "/adopt "+strconv.FormatInt(id, 10)+" $0.79")
			he.now = he.now.Add(30 * time.Second)
			_, ans := he.announce(tok, "runpod", "abc123", "NVIDIA A40")
			if ans == nil || ans.Token == "" {
				t.Fatalf("no hand-over: %+v", ans)
			}
			// The agent reports with the rental's own token, from the run
			// that announced it.
			he.now = he.now.Add(30 * time.Second)
			hb := he.heartbeat(wire.VerdictBusy)
			hb.BootID = "b-abc123"
			hb.Instance = &wire.InstanceFacts{Platform: "runpod", ID: "abc123", BootedAt: he.now.Add(-6 * time.Minute)}
			if code := he.post(ans.Token, hb); code != http.StatusOK {
				t.Fatalf("rental heartbeat: %d", code)
			}
			he.now = he.now.Add(20 * time.Second)
			contains(t, he.say(alice, "/release runpod-abc123"), tt.want...)
			for range 10 {
				he.now = he.now.Add(30 * time.Second)
				he.announce(tok, "runpod", "abc123", "NVIDIA A40")
			}
			if ins, err := he.db.PendingInstances(context.Background(), alice); err != nil || len(ins) != 0 {
				t.Errorf("the released instance, still running, waits as a new one: %+v, %v", ins, err)
			}
		})
	}
}
