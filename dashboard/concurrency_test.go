package dashboard_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
)

// TestServer_Concurrent: the same initData sent at once by many clients
// signs in exactly one of them; pages and links are served concurrently.
func TestServer_Concurrent(t *testing.T) {
	e := newEnv(t, nil)
	e.fill(1)
	data := dashtest.InitData(botToken, 1, e.now.Add(-time.Minute))
	var ok, replayed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch rec := e.do(http.MethodPost, dashboard.PathSession, data); rec.Code {
			case http.StatusOK:
				ok.Add(1)
				tok := tokenOf(t, rec.Body.Bytes())
				for range 3 {
					if r := e.get(tok, dashboard.PathMonth, nil); r.Code != http.StatusOK {
						t.Errorf("month: %d", r.Code)
					}
				}
			case http.StatusUnauthorized:
				replayed.Add(1)
			default:
				t.Errorf("exchange: %d %s", rec.Code, rec.Body)
			}
			if _, _, err := e.srv.Link(t.Context(), 1); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || replayed.Load() != 7 {
		t.Errorf("%d exchanges succeeded and %d were refused, want 1 and 7", ok.Load(), replayed.Load())
	}
}
